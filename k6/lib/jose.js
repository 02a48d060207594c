// JOSE for ACME (RFC 8555 section 6.2) with k6's WebCrypto: ES256 account keys, their JWK thumbprint
// (RFC 7638) and flattened JWS. WebCrypto's ECDSA signature is r||s, 64 bytes for P-256, which is
// exactly JWS ES256's form (RFC 7518 section 3.4), so nothing is converted here; a CSR wants DER
// (der.js does that).
import encoding from 'k6/encoding';

const ES256 = { name: 'ECDSA', hash: 'SHA-256' };

export function b64url(data) {
  if (typeof data === 'string') data = new TextEncoder().encode(data);
  if (data instanceof Uint8Array) data = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  return encoding.b64encode(data, 'rawurl');
}

// The members RFC 7638 section 3.2 keeps per key type, in lexicographic order.
const THUMBPRINT_MEMBERS = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };

// thumbprintInput is the JWK's canonical JSON: required members only, sorted, no whitespace.
export function thumbprintInput(jwk) {
  const members = THUMBPRINT_MEMBERS[jwk.kty];
  if (!members) throw new Error(`JWK thumbprint: key type ${jwk.kty} is not EC, RSA or OKP`);
  return `{${members.map((m) => {
    if (typeof jwk[m] !== 'string') throw new Error(`JWK thumbprint: member ${m} missing`);
    return `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`;
  }).join(',')}}`;
}

export async function thumbprint(jwk) {
  return b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(thumbprintInput(jwk))));
}

// p256JWK is the public JWK of an uncompressed P-256 point (0x04 || X || Y), each coordinate its full 32
// bytes as RFC 7518 section 6.2.1.2 requires. k6's own JWK export (v2.2.0, webcrypto/jwk.go) writes
// big.Int.Bytes(), which drops a leading zero byte: about one key in 128 then has a 31-byte x or y,
// and certctl's go-jose refuses the new-account JWS as malformed (HTTP 400).
export function p256JWK(raw) {
  const point = new Uint8Array(raw);
  if (point.length !== 65 || point[0] !== 0x04) throw new Error(`P-256 public key: want 65 bytes starting 0x04, got ${point.length}`);
  return { kty: 'EC', crv: 'P-256', x: b64url(point.slice(1, 33)), y: b64url(point.slice(33, 65)) };
}

// newAccountKey: a P-256 key pair, its public JWK (only the members a JWS header carries) and thumbprint.
export async function newAccountKey() {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const jwk = p256JWK(await crypto.subtle.exportKey('raw', pair.publicKey));
  return { pair, jwk, thumbprint: await thumbprint(jwk) };
}

// signES256 signs bytes with the key's private half: r||s.
export async function signES256(key, bytes) {
  return new Uint8Array(await crypto.subtle.sign(ES256, key.pair.privateKey, bytes));
}

// jws is the flattened JSON serialisation ACME posts (RFC 8555 section 6.2). The header carries the JWK
// until the account exists (new-account), the account URL as kid after; payload '' is POST-as-GET.
export async function jws(key, header, payload) {
  const protectedHeader = Object.assign({ alg: 'ES256' }, header);
  if (!protectedHeader.kid) protectedHeader.jwk = key.jwk;
  const p = b64url(JSON.stringify(protectedHeader));
  const body = payload === '' ? '' : b64url(JSON.stringify(payload));
  const sig = await signES256(key, new TextEncoder().encode(`${p}.${body}`));
  return JSON.stringify({ protected: p, payload: body, signature: b64url(sig) });
}
