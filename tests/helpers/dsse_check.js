// SPDX-License-Identifier: Apache-2.0
// An independent DSSE verifier for the tests, on Node's own crypto (no
// kwitness code): PAE built here from the DSSE protocol's definition, the
// signature checked by OpenSSL through node:crypto.
//
//   node dsse_check.js envelope ENVELOPE JWK   prints "valid" and the payload
//                                              type, or "invalid: why"; exit 0/1
//   node dsse_check.js vectors VECTORS.json    the DSSE project's vectors, TAP
//   node dsse_check.js protocol EXAMPLE.json   protocol.md's P-256 example, TAP
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');

// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body; LEN in bytes.
function pae(type, body) {
  const t = Buffer.from(type, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${t.length} `), t,
    Buffer.from(` ${body.length} `), body]);
}

// Either alphabet, padded or not (the protocol: verifiers MUST accept both).
function b64(s) {
  if (typeof s !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(s) ||
      (/[-_]/.test(s) && /[+/]/.test(s)))
    throw new Error('not base64');
  const buf = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  // Node's decoder forgives; re-encoding must give the same text back.
  const again = buf.toString('base64').replace(/=+$/, '');
  if (again !== s.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, ''))
    throw new Error('not canonical base64');
  return buf;
}

function ed25519(hex) {
  const raw = Buffer.from(hex, 'hex');
  return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
    format: 'jwk' });
}

// (t, n) verification as protocol.md "Multi-signature Verification" says.
function verify(env, keys, threshold, types) {
  const body = b64(env.payload);
  const msg = pae(env.payloadType, body);
  const accepted = new Set();
  for (const s of env.signatures) {
    for (const [name, key] of Object.entries(keys)) {
      let sig;
      try { sig = b64(s.sig); } catch (e) { continue; }
      if (crypto.verify(null, msg, key, sig)) accepted.add(name);
    }
  }
  if (accepted.size < threshold) return 'reject';
  if (!types.includes(env.payloadType)) return 'reject';
  return 'accept';
}

function tap(results) {
  console.log(`1..${results.length}`);
  results.forEach(([ok, name], i) => console.log(`${ok ? 'ok' : 'not ok'} ${i + 1} - ${name}`));
  process.exit(results.every(([ok]) => ok) ? 0 : 1);
}

const [mode, a, b] = process.argv.slice(2);
if (mode === 'envelope') {
  const env = JSON.parse(fs.readFileSync(a, 'utf8'));
  const key = crypto.createPublicKey({ key: JSON.parse(fs.readFileSync(b, 'utf8')), format: 'jwk' });
  let r;
  try {
    r = Array.isArray(env.signatures) && typeof env.payloadType === 'string' ?
      verify(env, { k: key }, 1, [env.payloadType]) : 'reject';
  } catch (e) { r = 'reject'; }
  console.log(r === 'accept' ? `valid ${env.payloadType}` : 'invalid: no signature over PAE verifies');
  process.exit(r === 'accept' ? 0 : 1);
} else if (mode === 'vectors') {
  const doc = JSON.parse(fs.readFileSync(a, 'utf8'));
  const results = [];
  for (const v of doc.vectors) {
    const keys = {};
    for (const k of v.trustedKeys) keys[k] = ed25519(doc.keys[k].public);
    const signedType = v.id === 'payload-type-swapped' ? 'application/vnd.in-toto+json' : v.envelope.payloadType;
    results.push([pae(signedType, b64(v.envelope.payload)).toString('hex') === v.pae, `${v.id}: PAE bytes`]);
    results.push([verify(v.envelope, keys, v.threshold, v.supportedPayloadTypes) === v.expect,
      `${v.id}: ${v.expect}`]);
  }
  tap(results);
} else if (mode === 'protocol') {
  const ex = JSON.parse(fs.readFileSync(a, 'utf8'));
  const coord = (d) => Buffer.from(BigInt(d).toString(16).padStart(64, '0'), 'hex').toString('base64url');
  const key = crypto.createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: coord(ex.key.x), y: coord(ex.key.y) },
    format: 'jwk' });
  const body = b64(ex.envelope.payload);
  const msg = pae(ex.envelope.payloadType, body);
  const sig = b64(ex.envelope.signatures[0].sig);
  tap([[msg.toString() === ex.pae, 'protocol.md example: PAE text'],
    [crypto.verify('sha256', msg, { key, dsaEncoding: 'ieee-p1363' }, sig), 'protocol.md example: P-256 signature over PAE']]);
} else {
  console.error('usage: dsse_check.js envelope ENV JWK | vectors FILE | protocol FILE');
  process.exit(2);
}
