// The withheld record of a redacted bundle (FORMAT.md, "Redacted bundles"): the member
// NAME-VERSION/withheld.json, read strictly against the manifest. Any problem rejects the
// bundle with the code of the first problem found (in the order the rules are listed).

import { strictJson } from "./json.mjs";
import { Problem, Rejected } from "./problems.mjs";

export const RECORD_NAME = "withheld.json";
const FORMAT = "reprobundle-withheld/1";
const FORMAT_RE = /^reprobundle-withheld\/([0-9]+)(?:\.([0-9]+))?$/;
const SHA256 = /^[0-9a-f]{64}$/;
const MAX_REASON = 2000; // characters (code points)
const KEYS = ["files", "format"];
const FILE_KEYS = ["path", "reason", "sha256", "size"];
// White space, as FORMAT.md lists it: a reason of nothing else is blank.
const BLANK = /^[\t\n\u000b\u000c\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/u;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const isMap = (v) => v instanceof Map;
const sorted = (keys) => [...keys].sort();

const inputsOf = (ref) => (typeof ref === "string" ? [ref] : ref);

// The files some case names as an input, or that lie under a folder a case names.
export function readByCases(doc) {
  const listed = new Set(doc.files.map((f) => f.path));
  const named = new Set(doc.cases.flatMap((c) => Object.values(c.inputs).flatMap(inputsOf)));
  const folders = [...named].filter((p) => !listed.has(p)).map((p) => `${p.replace(/\/+$/, "")}/`);
  const read = new Set([...named].filter((p) => listed.has(p)));
  for (const path of listed) if (folders.some((f) => path.startsWith(f))) read.add(path);
  return read;
}

// The record's bytes checked against the manifest (``doc``): the set of withheld paths, or a
// rejection naming ``where``.
export function parseWithheld(bytes, doc, where) {
  const problems = [];
  const bad = (message, code = "withheld.format") => problems.push(new Problem(where, code, message));
  const stop = () => {
    const message = problems.map((p) => p.message).join("; ");
    return new Rejected(`the withheld record does not hold: ${message}`, [new Problem(where, problems[0].code, message)]);
  };
  let record;
  try {
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) throw new SyntaxError("starts with a byte-order mark");
    record = strictJson(utf8.decode(bytes), 4);
  } catch (error) {
    bad(`is not valid JSON: ${error.message}`);
    throw stop();
  }
  if (!isMap(record)) {
    bad("is not a JSON object");
    throw stop();
  }
  const extra = sorted(record.keys()).filter((k) => !KEYS.includes(k));
  if (extra.length) bad(`has keys this verifier does not know: ${extra.join(", ")}; expected exactly format, files`);
  const format = record.get("format");
  const match = typeof format === "string" ? FORMAT_RE.exec(format) : null;
  if (match === null || match[1] !== "1") {
    bad(`format is ${typeof format === "string" ? JSON.stringify(format) : String(format)}, expected '${FORMAT}': a withheld record of another format needs another verifier`);
    throw stop();
  }
  const entries = record.get("files");
  if (!Array.isArray(entries) || entries.length === 0) {
    bad("files must be a non-empty list");
    throw stop();
  }
  const listed = new Map(doc.files.map((f) => [f.path, f]));
  const read = readByCases(doc);
  const seen = new Set();
  entries.forEach((entry, i) => {
    const at = `files[${i}]`;
    if (!isMap(entry)) return bad(`${at} is not an object`);
    if (sorted(entry.keys()).join() !== FILE_KEYS.join()) {
      return bad(`${at} has keys ${sorted(entry.keys()).join(", ")}, expected exactly ${FILE_KEYS.join(", ")}`);
    }
    const [path, size, sha256, reason] = ["path", "size", "sha256", "reason"].map((k) => entry.get(k));
    if (typeof path !== "string" || typeof reason !== "string") return bad(`${at}: path and reason must be strings`);
    if (typeof size !== "bigint" || size < 0n || size >= 2n ** 63n) return bad(`${at}: size must be a whole number of bytes`);
    if (typeof sha256 !== "string" || !SHA256.test(sha256)) return bad(`${at}: sha256 must be 64 lower-case hex digits`);
    if (BLANK.test(reason) || [...reason].length > MAX_REASON) {
      return bad(`${at}: reason must be non-empty, at most ${MAX_REASON} characters`);
    }
    const top = path.split("/")[0];
    if (path === "manifest.toml" || path === RECORD_NAME || top === "signatures") {
      return bad(`${at} ('${path}') cannot be withheld: the manifest, the signatures and the record are what the rest is checked with`, "withheld.reserved");
    }
    const file = listed.get(path);
    if (file === undefined) return bad(`${at} ('${path}') is not a file the manifest lists`, "withheld.unlisted");
    if (file.sha256 !== sha256 || file.size !== size) {
      return bad(`${at} ('${path}') observed sha256 ${sha256} and size ${size}, the manifest says sha256 ${file.sha256} and size ${file.size}`, "withheld.digest");
    }
    if (!read.has(path)) return bad(`${at} ('${path}') is read by no case: only evidence a case reads may be withheld`, "withheld.unread");
    if (seen.has(path)) return bad(`${at} ('${path}') is withheld twice`, "withheld.duplicate");
    seen.add(path);
    return null;
  });
  if (problems.length) throw stop();
  return seen;
}
