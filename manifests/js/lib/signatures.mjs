// Signatures (FORMAT.md, "Signatures"): each file read strictly, each signature checked
// over DSSE's pre-authentication encoding of the exact manifest bytes with Ed25519
// (node:crypto), then the reviewer's trust applied.

import crypto from "node:crypto";
import { strictJson } from "./json.mjs";
import { Problem, Rejected, UsageError } from "./problems.mjs";

export const PAYLOAD_TYPE = "application/vnd.reprobundle.manifest+toml; format=reprobundle/1";
const SIGNATURE_FORMAT = "reprobundle-signature/1";
const KEYS = ["format", "keyid", "payload_type", "public_key", "sig"];
const MAX_SIGNATURE_FILE = 16 << 10;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

class SignatureProblem extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const sha256 = (bytes) => crypto.createHash("sha256").update(bytes).digest("hex");

export function pae(payloadType, payload) {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `),
    type,
    Buffer.from(` ${payload.length} `),
    payload,
  ]);
}

// -- keys ------------------------------------------------------------------------------------

function strictBase64(text, what) {
  const ok = /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;
  const raw = ok ? Buffer.from(text, "base64") : null;
  if (!ok || raw.toString("base64") !== text) {
    throw new SignatureProblem("signature.format", `${what} is not canonical base64`);
  }
  return raw;
}

const mod = (a) => ((a % P) + P) % P;
function power(base, exp) {
  let result = 1n;
  base = mod(base);
  while (exp > 0n) {
    if (exp & 1n) result = (result * base) % P;
    base = (base * base) % P;
    exp >>= 1n;
  }
  return result;
}
const inverse = (a) => power(a, P - 2n);
const D = mod(-121665n * inverse(121666n));
const SQRT_M1 = power(2n, (P - 1n) / 4n);

// Why 32 bytes are not a usable Ed25519 public key (RFC 8032 5.1.3, and no small order).
export function weakKeyReason(raw) {
  if (raw.length !== 32) return `an Ed25519 public key is 32 bytes, observed ${raw.length}`;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(raw[i]);
  const sign = y >> 255n;
  y &= (1n << 255n) - 1n;
  if (y >= P) return "the key is not canonically encoded";
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  const x2 = mod(u * inverse(v));
  let x = power(x2, (P + 3n) / 8n);
  if (mod(x * x - x2) !== 0n) x = mod(x * SQRT_M1);
  if (mod(x * x - x2) !== 0n) return "the key is not a point on the Ed25519 curve";
  if (x === 0n && sign === 1n) return "the key is not canonically encoded";
  if ((x & 1n) !== sign) x = P - x;
  // [8]P by three doublings (affine Edwards addition of a point to itself)
  let [px, py] = [x, y];
  for (let i = 0; i < 3; i++) {
    const t = mod(D * px * px * py * py);
    [px, py] = [mod(2n * px * py * inverse(1n + t)), mod((py * py + px * px) * inverse(1n - t))];
  }
  if (px === 0n && py === 1n) return "the key is a point of small order: any signature could be forged for it";
  return null;
}

function keyObject(raw) {
  return crypto.createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(raw).toString("base64url") },
    format: "jwk",
  });
}

// A public key file given with --trust: ``ed25519:BASE64`` or a PEM PUBLIC KEY block.
export function readTrustedKey(text, source) {
  const body = text.trim();
  let raw;
  if (body.startsWith("ed25519:")) {
    try {
      raw = strictBase64(body.slice("ed25519:".length), "the public key");
    } catch (error) {
      throw new UsageError(`refusing to trust ${source}: ${error.message}`);
    }
  } else if (body.startsWith("-----BEGIN PUBLIC KEY-----")) {
    let key;
    try {
      key = crypto.createPublicKey(body);
    } catch (error) {
      throw new UsageError(`refusing to trust ${source}: not a readable public key (${error.message})`);
    }
    if (key.asymmetricKeyType !== "ed25519") {
      throw new UsageError(`refusing to trust ${source}: only Ed25519 keys are accepted`);
    }
    raw = Buffer.from(key.export({ format: "jwk" }).x, "base64url");
  } else {
    throw new UsageError(`refusing to trust ${source}: expected a PEM PUBLIC KEY block or 'ed25519:BASE64'`);
  }
  const weak = weakKeyReason(raw);
  if (weak) throw new UsageError(`refusing to trust ${source}: ${weak}`);
  return { name: source.split("/").pop(), raw: Buffer.from(raw) };
}

// -- one signature file --------------------------------------------------------------------

function parseSignature(bytes) {
  if (bytes.length > MAX_SIGNATURE_FILE) {
    throw new SignatureProblem("signature.format", `larger than ${MAX_SIGNATURE_FILE} bytes`);
  }
  let doc;
  try {
    doc = strictJson(utf8.decode(bytes));
  } catch (error) {
    throw new SignatureProblem("signature.format", `not a JSON signature object: ${error.message}`);
  }
  if (!(doc instanceof Map) || [...doc.keys()].sort().join() !== KEYS.join()) {
    throw new SignatureProblem("signature.format", `expected exactly the keys ${KEYS.join(", ")}`);
  }
  if (!KEYS.every((k) => typeof doc.get(k) === "string")) {
    throw new SignatureProblem("signature.format", "every field must be a string");
  }
  if (doc.get("format") !== SIGNATURE_FORMAT) {
    throw new SignatureProblem("signature.format", `format is '${doc.get("format")}', expected '${SIGNATURE_FORMAT}'`);
  }
  const publicKey = strictBase64(doc.get("public_key"), "public_key");
  const weak = weakKeyReason(publicKey);
  if (weak) throw new SignatureProblem("key.weak", weak);
  const sig = strictBase64(doc.get("sig"), "sig");
  if (sig.length !== 64) throw new SignatureProblem("signature.format", `sig is ${sig.length} bytes, expected 64`);
  if (doc.get("keyid") !== sha256(publicKey)) {
    throw new SignatureProblem("signature.format", "keyid does not name the public key the signature carries");
  }
  return { payloadType: doc.get("payload_type"), keyid: doc.get("keyid"), publicKey, sig };
}

function verifies(signature, manifestBytes) {
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature.sig[i]);
  if (s >= L) return false; // S must be reduced: no malleated twin of a valid signature
  return crypto.verify(null, pae(signature.payloadType, manifestBytes), keyObject(signature.publicKey), signature.sig);
}

// -- the judgement -------------------------------------------------------------------------

// Judge the signature files (name -> bytes) over the manifest bytes against the trusted
// keys: { state, signers, unknownKeyids } or a rejection.
// ``allowUnsigned``: the trusted keys only name the signers (a bundle none of them signed
// is accepted and reported as it is).
export function judgeSignatures(manifestBytes, files, trusted, allowUnsigned = false) {
  const parsed = [];
  let problems = [];
  for (const [where, bytes] of [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    try {
      parsed.push([where, parseSignature(bytes)]);
    } catch (error) {
      if (!(error instanceof SignatureProblem)) throw error;
      problems.push(new Problem(where, error.code, error.message));
    }
  }
  if (problems.length) throw new Rejected("a signature is malformed", problems);
  const seen = new Map();
  for (const [where, signature] of parsed) {
    const key = signature.publicKey.toString("hex");
    if (seen.has(key)) {
      problems.push(new Problem(where, "signature.duplicate", `a second signature by key ${signature.keyid.slice(0, 16)} (first in ${seen.get(key)})`));
    }
    seen.set(key, where);
    if (signature.payloadType !== PAYLOAD_TYPE) {
      problems.push(new Problem(where, "signature.payload_type", `payload type is '${signature.payloadType}': it does not sign a reprobundle manifest`));
    } else if (!verifies(signature, manifestBytes)) {
      problems.push(new Problem(where, "signature.bad", `the signature by key ${signature.keyid.slice(0, 16)} does not match the manifest bytes`));
    }
  }
  if (problems.length) throw new Rejected("a signature does not verify: the bundle was altered", problems);
  const byRaw = new Map(trusted.map((k) => [k.raw.toString("hex"), k]));
  const signers = [];
  const unknownKeyids = [];
  for (const [, signature] of parsed) {
    const key = byRaw.get(signature.publicKey.toString("hex"));
    if (key) signers.push(key.name);
    else unknownKeyids.push(signature.keyid);
  }
  const state = signers.length ? "trusted" : parsed.length ? "unknown-key" : "unsigned";
  if (trusted.length && !allowUnsigned && state !== "trusted") {
    const message = `the bundle is ${describe({ state, signers, unknownKeyids })}; ${trusted.length} trusted key(s) given`;
    throw new Rejected("a signature by a trusted key is required", [new Problem("signatures/", "signature.required", message)]);
  }
  return { state, signers, unknownKeyids };
}

export function describe(check) {
  if (check.state === "trusted") return `signed by a trusted key (${check.signers.join(", ")})`;
  if (check.state === "unknown-key") {
    return `signed by a key you do not trust (key id ${check.unknownKeyids.map((k) => k.slice(0, 16)).join(", ")})`;
  }
  return "unsigned";
}
