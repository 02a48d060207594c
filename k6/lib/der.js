// Just enough DER for the ACME journeys: read a certificate's Authority Key Identifier and serial number
// for ACME Renewal Information (RFC 9773), which k6/crypto/x509 exposes neither of, and write the P-256
// certificate request an ACME finalize carries (RFC 2986), signed with WebCrypto.
import encoding from 'k6/encoding';

function pemToBytes(pem) {
  const b64 = String(pem).split('-----END CERTIFICATE-----')[0].replace(/-----BEGIN CERTIFICATE-----/, '').replace(/\s+/g, '');
  return new Uint8Array(encoding.b64decode(b64, 'std'));
}

// pemBlocks splits a PEM chain into its certificates' DER.
export function pemBlocks(pem) {
  return String(pem).split('-----END CERTIFICATE-----').filter((p) => p.includes('-----BEGIN CERTIFICATE-----')).map((p) => pemToBytes(p + '-----END CERTIFICATE-----'));
}

// readTLV(bytes, at) -> { tag, start (of contents), end }
export function readTLV(b, at) {
  at = at || 0;
  const tag = b[at];
  let len = b[at + 1];
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[start + i];
    start += n;
  }
  if (start + len > b.length) throw new Error('truncated DER');
  return { tag, at, start, end: start + len };
}

export function children(b, tlv) {
  const out = [];
  for (let at = tlv.start; at < tlv.end; ) {
    const c = readTLV(b, at);
    out.push(c);
    at = c.end;
  }
  return out;
}

function b64url(bytes) {
  return encoding.b64encode(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), 'rawurl');
}

const AKI_OID = [0x55, 0x1d, 0x23]; // 2.5.29.35

// ariCertID(pem) -> { id: 'b64url(keyIdentifier).b64url(serial)', serialHex }
export function ariCertID(pem) {
  const b = pemToBytes(pem);
  const cert = readTLV(b, 0);
  const tbs = children(b, cert)[0];
  const fields = children(b, tbs);
  let i = 0;
  if (fields[0].tag === 0xa0) i++; // explicit version
  const serial = b.subarray(fields[i].start, fields[i].end); // DER INTEGER contents, leading 0x00 kept
  const ext = fields.find((f) => f.tag === 0xa3);
  if (!ext) throw new Error('certificate has no extensions, so no Authority Key Identifier');
  for (const e of children(b, children(b, ext)[0])) {
    const parts = children(b, e);
    const oid = b.subarray(parts[0].start, parts[0].end);
    if (oid.length !== 3 || oid.some((v, k) => v !== AKI_OID[k])) continue;
    const value = parts[parts.length - 1]; // OCTET STRING wrapping AuthorityKeyIdentifier
    for (const f of children(b, readTLV(b, value.start))) {
      if (f.tag === 0x80) {
        const serialHex = Array.from(serial, (v) => ('0' + v.toString(16)).slice(-2)).join('');
        return { id: `${b64url(b.subarray(f.start, f.end))}.${b64url(serial)}`, serialHex };
      }
    }
  }
  throw new Error('certificate has no Authority Key Identifier keyIdentifier');
}

// --- Writing: a certificate request ---

function concat(parts) {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// tlv(tag, ...contents) is one DER element, its length in the short or long form.
export function tlv(tag, ...contents) {
  const body = concat(contents);
  const n = body.length;
  let len;
  if (n < 0x80) len = [n];
  else if (n < 0x100) len = [0x81, n];
  else if (n < 0x10000) len = [0x82, n >> 8, n & 0xff];
  else throw new Error('DER element over 64 KiB');
  return concat([new Uint8Array([tag]), new Uint8Array(len), body]);
}

const bytes = (...v) => new Uint8Array(v);
const utf8 = (s) => new TextEncoder().encode(s);
const seq = (...c) => tlv(0x30, ...c);

// unsignedInteger is a DER INTEGER of a big-endian magnitude: no leading zeros but one before a high bit.
function unsignedInteger(m) {
  let i = 0;
  while (i < m.length - 1 && m[i] === 0) i++;
  const v = m.subarray(i);
  return tlv(0x02, v[0] & 0x80 ? concat([bytes(0), v]) : v);
}

// ecdsaSigDER turns WebCrypto's r||s into X.509's ECDSA-Sig-Value, SEQUENCE { r INTEGER, s INTEGER }.
export function ecdsaSigDER(rs) {
  const half = rs.length / 2;
  return seq(unsignedInteger(rs.subarray(0, half)), unsignedInteger(rs.subarray(half)));
}

const OID_CN = bytes(0x06, 0x03, 0x55, 0x04, 0x03); // 2.5.4.3
const OID_EXTENSION_REQUEST = bytes(0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x0e); // 1.2.840.113549.1.9.14
const OID_SAN = bytes(0x06, 0x03, 0x55, 0x1d, 0x11); // 2.5.29.17
const OID_ECDSA_SHA256 = bytes(0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02); // 1.2.840.10045.4.3.2

// csrInfo is the CertificationRequestInfo: version 0, CN, the key, and the DNS names as a requested
// subjectAltName extension (what ACME CAs read; the CN alone is deprecated for names).
export function csrInfo(spki, cn, names) {
  const subject = seq(tlv(0x31, seq(OID_CN, tlv(0x0c, utf8(cn)))));
  const san = seq(...names.map((n) => tlv(0x82, utf8(n))));
  const extensions = seq(seq(OID_SAN, tlv(0x04, san)));
  const attributes = tlv(0xa0, seq(OID_EXTENSION_REQUEST, tlv(0x31, extensions)));
  return seq(tlv(0x02, bytes(0)), subject, spki, attributes);
}

// csrDER(pair, cn, names): a P-256 certificate request signed by the pair's private key, as DER.
export async function csrDER(pair, cn, names) {
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', pair.publicKey));
  const info = csrInfo(spki, cn, names);
  const rs = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, info));
  return seq(info, seq(OID_ECDSA_SHA256), tlv(0x03, bytes(0), ecdsaSigDER(rs)));
}

// newCSRPem(cn): a certificate request for cn (CN and DNS name) with a fresh P-256 key, as PEM.
export async function newCSRPem(cn) {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const der = await csrDER(pair, cn, [cn]);
  const b64 = encoding.b64encode(der.buffer.slice(der.byteOffset, der.byteOffset + der.byteLength), 'std');
  return `-----BEGIN CERTIFICATE REQUEST-----\n${b64.match(/.{1,64}/g).join('\n')}\n-----END CERTIFICATE REQUEST-----\n`;
}

// --- Reading a certificate: its names, and whether a CA signed it ---

const OID_SAN_BYTES = [0x55, 0x1d, 0x11];
const OID_CN_BYTES = [0x55, 0x04, 0x03];

const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

function tbsFields(b) {
  const fields = children(b, children(b, readTLV(b, 0))[0]);
  return fields[0].tag === 0xa0 ? fields.slice(1) : fields; // serial, sigAlg, issuer, validity, subject, spki, …
}

// certNames(der) -> { cn, dns: [...] }: the subject's common name and the subjectAltName DNS names.
export function certNames(der) {
  const b = der;
  const f = tbsFields(b);
  let cn = '';
  for (const rdn of children(b, f[4])) {
    for (const atv of children(b, rdn)) {
      const [oid, val] = children(b, atv);
      if (same(Array.from(b.subarray(oid.start, oid.end)), OID_CN_BYTES)) cn = new TextDecoder().decode(b.subarray(val.start, val.end));
    }
  }
  const dns = [];
  const ext = f.find((x) => x.tag === 0xa3);
  if (ext) {
    for (const e of children(b, children(b, ext)[0])) {
      const parts = children(b, e);
      if (!same(Array.from(b.subarray(parts[0].start, parts[0].end)), OID_SAN_BYTES)) continue;
      const value = parts[parts.length - 1];
      for (const g of children(b, readTLV(b, value.start))) {
        if (g.tag === 0x82) dns.push(new TextDecoder().decode(b.subarray(g.start, g.end)));
      }
    }
  }
  return { cn, dns };
}

const SIG_ALGS = {
  '2a8648ce3d040302': { name: 'ECDSA', hash: 'SHA-256' },
  '2a8648ce3d040303': { name: 'ECDSA', hash: 'SHA-384' },
  '2a864886f70d01010b': { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  '2a864886f70d01010c': { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' },
};
const CURVES = { '2a8648ce3d030107': 'P-256', '2b81040022': 'P-384' };
const hex = (u) => Array.from(u, (v) => ('0' + v.toString(16)).slice(-2)).join('');

// rawECDSA: X.509's SEQUENCE { r, s } as WebCrypto's fixed-width r||s.
function rawECDSA(sig, size) {
  const [r, s] = children(sig, readTLV(sig, 0));
  const out = new Uint8Array(size * 2);
  const put = (t, at) => {
    let v = sig.subarray(t.start, t.end);
    while (v.length > size && v[0] === 0) v = v.subarray(1);
    out.set(v, at + size - v.length);
  };
  put(r, 0);
  put(s, size);
  return out;
}

// verifySigned(tbs, algTLV's bytes holder, sig BIT STRING contents, signerCertDER): WebCrypto's verdict
// on a signature over tbs by the certificate's key. Certificates, OCSP responses and CRLs share it.
export async function verifySigned(tbs, algOIDHex, sigBits, signer) {
  const alg = SIG_ALGS[algOIDHex];
  if (!alg) throw new Error(`signed with an algorithm (OID ${algOIDHex}) this check does not know`);
  let sig = sigBits.slice(1); // BIT STRING: skip the unused-bits byte
  const spkiTLV = tbsFields(signer)[5];
  const spki = signer.slice(spkiTLV.at, spkiTLV.end); // WebCrypto gets whole arrays, not views
  let key;
  if (alg.name === 'ECDSA') {
    const algId = children(signer, children(signer, spkiTLV)[0]);
    const curve = CURVES[hex(signer.subarray(algId[1].start, algId[1].end))];
    if (!curve) throw new Error('signer key on a curve this check does not know');
    key = await crypto.subtle.importKey('spki', spki, { name: 'ECDSA', namedCurve: curve }, false, ['verify']);
    sig = rawECDSA(sig, curve === 'P-256' ? 32 : 48);
  } else {
    key = await crypto.subtle.importKey('spki', spki, { name: alg.name, hash: alg.hash }, false, ['verify']);
  }
  return crypto.subtle.verify(alg, key, sig, tbs.slice());
}

// signedTriple(der) -> { tbs, alg, sig } of a SEQUENCE { tbs, AlgorithmIdentifier, BIT STRING }: a
// certificate, a CRL, a BasicOCSPResponse.
export function signedTriple(der) {
  const top = children(der, readTLV(der, 0));
  const algOID = children(der, top[1])[0];
  return { top, tbs: der.slice(top[0].at, top[0].end), alg: hex(der.subarray(algOID.start, algOID.end)), sig: der.slice(top[2].start, top[2].end) };
}

// signedBy(certDER, caDER): the certificate's signature verifies under the CA's public key.
export async function signedBy(cert, ca) {
  const t = signedTriple(cert);
  return verifySigned(t.tbs, t.alg, t.sig, ca);
}

export { hex as hexOf, tbsFields };
