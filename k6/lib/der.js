// Just enough DER to name a certificate for ACME Renewal Information (RFC 9773): the certificate's
// Authority Key Identifier and serial number. k6/crypto/x509 exposes neither.
import encoding from 'k6/encoding';

function pemToBytes(pem) {
  const b64 = String(pem).split('-----END CERTIFICATE-----')[0].replace(/-----BEGIN CERTIFICATE-----/, '').replace(/\s+/g, '');
  return new Uint8Array(encoding.b64decode(b64, 'std'));
}

// readTLV(bytes, at) -> { tag, start (of contents), end }
function readTLV(b, at) {
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
  return { tag, start, end: start + len };
}

function children(b, tlv) {
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
