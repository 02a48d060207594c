// Revocation checks as a relying party makes them: an OCSP request (RFC 6960) written in DER, and the
// OCSP response and CRL (RFC 5280) read and their signatures verified, with WebCrypto (der.js).
import { readTLV, children, tlv, verifySigned, signedTriple, hexOf, tbsFields } from './der.js';

const OID_SHA1 = new Uint8Array([0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a]);
const NULL = new Uint8Array([0x05, 0x00]);
const OID_OCSP_BASIC = '2b0601050507300101'; // 1.3.6.1.5.5.7.48.1.1

const RESPONSE_STATUS = ['successful', 'malformedRequest', 'internalError', 'tryLater', '', 'sigRequired', 'unauthorized'];
const CERT_STATUS = { 0x80: 'good', 0xa1: 'revoked', 0x82: 'unknown' };

// serialHex(bytes of a DER INTEGER's contents) -> lowercase hex without leading zeros.
export function serialHex(b) {
  return hexOf(b).replace(/^0+(?=.)/, '');
}

function hexBytes(h) {
  const s = h.length % 2 ? '0' + h : h;
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16);
  return out;
}

// time(b, tlv) -> Date of a UTCTime (YYMMDDHHMMSSZ) or GeneralizedTime (YYYYMMDDHHMMSSZ).
function time(b, t) {
  const s = new TextDecoder().decode(b.subarray(t.start, t.end));
  const m = t.tag === 0x17 ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(s) : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z$/.exec(s);
  if (!m) throw new Error(`time "${s}" is not in DER's form`);
  const year = t.tag === 0x17 ? (Number(m[1]) < 50 ? 2000 : 1900) + Number(m[1]) : Number(m[1]);
  return new Date(Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])));
}

// ocspRequest(caDER, serial hex) -> DER OCSPRequest for one certificate, CertID by SHA-1 of the issuer's
// name and key as RFC 6960 section 4.1.1 has it.
export async function ocspRequest(ca, serial) {
  const f = tbsFields(ca);
  const subject = ca.slice(f[4].at, f[4].end);
  const keyBits = children(ca, f[5])[1];
  const key = ca.slice(keyBits.start + 1, keyBits.end);
  const nameHash = new Uint8Array(await crypto.subtle.digest('SHA-1', subject));
  const keyHash = new Uint8Array(await crypto.subtle.digest('SHA-1', key));
  let n = hexBytes(serial.replace(/^0+(?=.)/, ''));
  if (n[0] & 0x80) n = Uint8Array.from([0, ...n]);
  const certID = tlv(0x30, tlv(0x30, OID_SHA1, NULL), tlv(0x04, nameHash), tlv(0x04, keyHash), tlv(0x02, n));
  return tlv(0x30, tlv(0x30, tlv(0x30, tlv(0x30, certID))));
}

// parseOCSP(der) -> { status, responses: [{ serial, status, thisUpdate, nextUpdate }], signed, certs }:
// signed is the BasicOCSPResponse's { tbs, alg, sig }, certs the certificates it carries (the responder's).
export function parseOCSP(der) {
  const top = children(der, readTLV(der, 0));
  const status = RESPONSE_STATUS[der[top[0].start]] || `status ${der[top[0].start]}`;
  if (status !== 'successful' || top.length < 2) return { status, responses: [], certs: [] };
  const rb = children(der, children(der, top[1])[0]);
  if (hexOf(der.subarray(rb[0].start, rb[0].end)) !== OID_OCSP_BASIC) throw new Error('not a basic OCSP response');
  const basic = der.slice(rb[1].start, rb[1].end);
  const signed = signedTriple(basic);
  const parts = signed.top;
  const certs = parts[3] ? children(basic, children(basic, parts[3])[0]).map((c) => basic.slice(c.at, c.end)) : [];
  let data = children(basic, parts[0]);
  if (data[0].tag === 0xa0) data = data.slice(1); // explicit version
  const responses = children(basic, data[2]).map((sr) => {
    const f = children(basic, sr);
    const id = children(basic, f[0]);
    const out = {
      serial: serialHex(basic.subarray(id[3].start, id[3].end)),
      status: CERT_STATUS[f[1].tag] || `tag ${f[1].tag}`,
      thisUpdate: time(basic, f[2]),
      nextUpdate: null,
    };
    const next = f.slice(3).find((x) => x.tag === 0xa0);
    if (next) out.nextUpdate = time(basic, readTLV(basic, next.start));
    return out;
  });
  return { status, responses, signed, certs };
}

// ocspVerified(parsed, caDER): the response is signed by the CA itself or by a responder certificate it
// carries that the CA signed (RFC 6960 section 4.2.2.2). Returns 'ca', 'delegated', or '' when neither.
export async function ocspVerified(p, ca) {
  const { tbs, alg, sig } = p.signed;
  if (await verifySigned(tbs, alg, sig, ca).catch(() => false)) return 'ca';
  for (const c of p.certs) {
    const ct = signedTriple(c);
    const byCA = await verifySigned(ct.tbs, ct.alg, ct.sig, ca).catch(() => false);
    if (byCA && await verifySigned(tbs, alg, sig, c).catch(() => false)) return 'delegated';
  }
  return '';
}

// ocspSelfConsistent: signed by the responder certificate it carries, whoever signed that (the check
// left when the CA that should have signed the responder is not the one the run knows).
export async function ocspSignedByCarried(p) {
  const { tbs, alg, sig } = p.signed;
  for (const c of p.certs) {
    if (await verifySigned(tbs, alg, sig, c).catch(() => false)) return true;
  }
  return false;
}

// saneTimes(r, now): thisUpdate not in the future (a minute of clock skew allowed) and nextUpdate, when
// given, after both thisUpdate and now.
export function saneTimes(r, now) {
  const skew = 60 * 1000;
  return r.thisUpdate.getTime() <= now + skew && (!r.nextUpdate || (r.nextUpdate > r.thisUpdate && r.nextUpdate.getTime() > now - skew));
}

// parseCRL(der) -> { thisUpdate, nextUpdate, revoked: [serial hex], signed }.
export function parseCRL(der) {
  const signed = signedTriple(der);
  let f = children(der, signed.top[0]);
  if (f[0].tag === 0x02) f = f.slice(1); // version
  const out = { thisUpdate: time(der, f[2]), nextUpdate: null, revoked: [], signed };
  let i = 3;
  if (f[i] && (f[i].tag === 0x17 || f[i].tag === 0x18)) out.nextUpdate = time(der, f[i++]);
  if (f[i] && f[i].tag === 0x30) {
    out.revoked = children(der, f[i]).map((e) => {
      const serial = children(der, e)[0];
      return serialHex(der.subarray(serial.start, serial.end));
    });
  }
  return out;
}

export async function crlVerified(c, ca) {
  return verifySigned(c.signed.tbs, c.signed.alg, c.signed.sig, ca).catch(() => false);
}
