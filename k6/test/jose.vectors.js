// Prints a JWS and a CSR made by k6/lib for test/jose, which verifies them with Go's crypto: the
// signatures checked by a second implementation, not by the WebCrypto that made them.
import { newAccountKey, jws } from '../lib/jose.js';
import { csrDER } from '../lib/der.js';
import { b64url } from '../lib/jose.js';

export const options = { iterations: 1, vus: 1 };

export default async function () {
  const key = await newAccountKey();
  const signed = JSON.parse(await jws(key, { nonce: 'bm9uY2U', url: 'https://ca.example/acme/new-order' }, { identifiers: [{ type: 'dns', value: 'a.example.com' }] }));
  const csr = await csrDER(key.pair, 'a.example.com', ['a.example.com', 'b.example.com']);
  console.log(JSON.stringify({ jws: signed, jwk: key.jwk, thumbprint: key.thumbprint, csr: b64url(csr) }));
}
