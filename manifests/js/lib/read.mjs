// Reading a bundle (FORMAT.md, "Reading a bundle", "Layout", "Limits"): the manifest
// first, then the signatures, judged before the payload; every payload member checked
// against the manifest, its problems collected, then the reconciliation.

import crypto from "node:crypto";
import { decompress } from "./stream.mjs";
import { members } from "./tar.mjs";
import { parseManifest } from "./manifest.mjs";
import { fold, foldersOf, MAX_PATH_BYTES, pathProblem, utf8Length } from "./paths.mjs";
import { Problem, Rejected, reject } from "./problems.mjs";
import { judgeSignatures } from "./signatures.mjs";
import { parseWithheld, RECORD_NAME } from "./withheld.mjs";

export const DEFAULT_LIMITS = {
  archive_bytes: 16 * 2 ** 30,
  members: 200_000,
  file_bytes: 8 * 2 ** 30,
  total_bytes: 32 * 2 ** 30,
  manifest_bytes: 16 * 2 ** 20,
  ratio: 200,
  ratio_floor: 64 * 2 ** 20,
};
const PAX_KEYS = new Set(["path", "size", "mtime", "atime", "ctime", "uid", "gid", "uname", "gname"]);
const TYPE_NAMES = { 1: "a hard link", 2: "a symbolic link", 3: "a device file", 4: "a device file", 6: "a FIFO", 7: "a contiguous file" };
const MAX_LISTED_PROBLEMS = 200;
const isFile = (m) => m.type === "0" || m.type === "\u0000";

function memberProblem(m) {
  if (m.type === "1" || m.type === "2") return `is ${TYPE_NAMES[m.type]} (to '${m.linkname}'); bundles hold regular files only`;
  if (TYPE_NAMES[m.type]) return `is ${TYPE_NAMES[m.type]}`;
  if (!isFile(m) && m.type !== "5") return `has an unsupported member type '${m.type}'`;
  const unknown = [...m.pax.keys()].filter((k) => !PAX_KEYS.has(k)).sort();
  if (unknown.length) return `has pax header fields this reader does not support: ${unknown.join(", ")}`;
  return null;
}

// Read ``data`` (the bundle file's bytes) with ``options`` ({trusted, identity, limits}).
// Returns what was found, or throws ``Rejected``.
export function readBundle(data, name, options) {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  if (data.length > limits.archive_bytes) {
    throw reject("limit.archive_size", "(archive)", `the file is larger than ${limits.archive_bytes} bytes`);
  }
  const { codec, plain } = decompress(data, name, limits);
  const problems = [];
  const note = (where, code, message) => problems.push(new Problem(where, code, message));
  let manifest = null;
  let manifestBytes = null;
  let top = "";
  let prefix = "/";
  let expected = new Map();
  let folders = new Set();
  const signatures = new Map();
  const seen = new Map();
  const foldedFiles = new Map();
  const foldedFolders = new Map();
  const hashed = new Map();
  let count = 0;
  let total = 0;
  let payloadStarted = false;
  let signatureCheck = null;
  let withheld = null; // the paths a redacted bundle's record withholds

  const startPayload = () => {
    const identity = sha256(manifestBytes);
    if (options.identity && identity !== options.identity) {
      throw reject(
        "identity.mismatch",
        "manifest.toml",
        `its identity is sha256:${identity}, expected sha256:${options.identity}`,
      );
    }
    const found = new Map([...signatures, ...(options.detached ?? [])]);
    signatureCheck = judgeSignatures(manifestBytes, found, options.trusted, options.allowUnsigned);
  };

  const clash = (key, memberName, file) => {
    const fresh = [];
    let parent = key.slice(0, Math.max(key.lastIndexOf("/"), 0));
    while (parent && !foldedFolders.has(parent)) {
      if (foldedFiles.has(parent)) return `needs a folder where '${foldedFiles.get(parent)}' is a file`;
      fresh.push(parent);
      parent = parent.slice(0, Math.max(parent.lastIndexOf("/"), 0));
    }
    if (file && foldedFolders.has(key)) return `is a file, but '${foldedFolders.get(key)}' needs it as a folder`;
    for (const folder of fresh) foldedFolders.set(folder, memberName);
    if (file) foldedFiles.set(key, memberName);
    else if (!foldedFolders.has(key)) foldedFolders.set(key, memberName);
    return null;
  };

  const nameOk = (m, listedName) => {
    const listed =
      listedName && m.nameValid && isFile(m) && [...m.pax.keys()].every((k) => PAX_KEYS.has(k)) &&
      utf8Length(m.name) <= MAX_PATH_BYTES;
    if (!listed) {
      const badName = pathProblem(m.name, !m.nameValid);
      const why = badName || memberProblem(m);
      if (why) {
        note(m.name, badName ? "member.name" : "member.type", why);
        return false;
      }
    }
    const key = fold(m.name);
    if (seen.has(key)) {
      const earlier = seen.get(key);
      note(m.name, "member.duplicate", earlier === m.name ? "appears twice" : `collides with '${earlier}' (case or Unicode folding)`);
      return false;
    }
    seen.set(key, m.name);
    const why = clash(key, m.name, isFile(m));
    if (why) {
      note(m.name, "member.file_and_folder", why);
      return false;
    }
    return true;
  };

  for (const m of members(plain)) {
    count++;
    if (count > limits.members) throw reject("limit.members", "(archive)", `more than ${limits.members} members`);
    const rel = m.name.slice(prefix.length);
    const want = expected.get(rel);
    if (!nameOk(m, want !== undefined && m.name.startsWith(prefix))) continue;
    if (manifest === null) {
      if (!m.name.endsWith("/manifest.toml") || m.name.split("/").length !== 2 || !isFile(m)) {
        throw reject("archive.layout", m.name, "the first member must be NAME-VERSION/manifest.toml");
      }
      if (m.size > limits.manifest_bytes) {
        throw reject("limit.manifest_size", m.name, `the manifest is larger than ${limits.manifest_bytes} bytes`);
      }
      top = m.name.split("/")[0];
      prefix = `${top}/`;
      manifestBytes = Buffer.from(m.data());
      manifest = parseManifest(manifestBytes);
      if (manifest.top !== top) {
        throw reject("archive.layout", `${top}/manifest.toml`, `the top folder is '${top}' but the manifest names '${manifest.top}'`);
      }
      expected = new Map(manifest.doc.files.map((f) => [f.path, [f.sha256, Number(f.size)]]));
      folders = foldersOf(expected.keys());
      continue;
    }
    if (!m.name.startsWith(prefix)) {
      note(m.name, "member.outside_top", `is not inside ${top}/`);
      continue;
    }
    if (m.type === "5") {
      if (!folders.has(rel)) note(m.name, "member.unlisted", "is a folder the manifest does not list");
      continue;
    }
    if (rel.startsWith("signatures/") && rel.split("/").length === 2) {
      if (payloadStarted) {
        throw reject("archive.layout", m.name, "a signature after the payload began; signatures/*.json come right after the manifest");
      }
      if (!rel.endsWith(".json")) {
        note(m.name, "member.unlisted", "signature files are named *.json");
        continue;
      }
      if (m.size > limits.manifest_bytes) {
        throw reject("limit.signature_size", m.name, `the signature file is larger than ${limits.manifest_bytes} bytes`);
      }
      signatures.set(rel, Buffer.from(m.data()));
      continue;
    }
    if (rel === RECORD_NAME && want === undefined && isFile(m)) {
      // the withheld record: once, after the manifest and the signatures, not payload
      if (payloadStarted || withheld !== null) {
        throw reject("archive.layout", m.name, `a withheld record after the payload began; ${RECORD_NAME} comes right after the manifest and the signatures`);
      }
      if (m.size > limits.manifest_bytes) {
        throw reject("limit.manifest_size", m.name, `the withheld record is larger than ${limits.manifest_bytes} bytes`);
      }
      withheld = parseWithheld(m.data(), manifest.doc, m.name);
      continue;
    }
    // the first payload member: its header is judged (a limit it passes rejects first),
    // then the pin and the signatures, before any of its bytes is read
    const starts = !payloadStarted;
    payloadStarted = true;
    if (want === undefined) {
      note(m.name, "member.unlisted", "is not listed in the manifest");
      if (starts) startPayload();
      continue;
    }
    if (m.size !== want[1]) {
      note(m.name, "member.size", `observed ${m.size} bytes, the manifest says ${want[1]}`);
      if (starts) startPayload();
      continue;
    }
    if (m.size > limits.file_bytes) throw reject("limit.file_size", m.name, `larger than ${limits.file_bytes} bytes`);
    total += m.size;
    if (total > limits.total_bytes) throw reject("limit.total_size", m.name, `the files add up to more than ${limits.total_bytes} bytes`);
    if (starts) startPayload();
    hashed.set(rel, sha256(m.data()));
  }
  if (manifest === null) throw reject("archive.empty", "(archive)", "the archive holds no manifest");
  if (!payloadStarted) startPayload();

  const named = new Set(problems.map((p) => p.where));
  for (const [rel, [want]] of expected) {
    const got = hashed.get(rel);
    const where = `${top}/${rel}`;
    if (withheld?.has(rel)) {
      if (got !== undefined || named.has(where)) note(where, "withheld.present", `is in the archive but ${RECORD_NAME} says it is withheld`);
      continue;
    }
    if (got === want) continue;
    if (got === undefined) {
      if (!named.has(where)) note(where, "file.missing", "is listed in the manifest but missing");
    } else {
      note(where, "file.hash", `SHA-256 is ${got}, the manifest says ${want}`);
    }
  }
  if (problems.length) {
    const shown = problems.slice(0, MAX_LISTED_PROBLEMS);
    if (problems.length > shown.length) {
      shown.push(new Problem("", "more", `... and ${problems.length - shown.length} more problem(s)`));
    }
    throw new Rejected(`${problems.length} problem(s) with its contents`, shown);
  }
  return {
    codec,
    identity: sha256(manifestBytes),
    name: manifest.doc.bundle.name,
    version: manifest.doc.bundle.version,
    files: expected.size,
    bytes: total,
    warnings: manifest.warnings,
    signatures: signatureCheck,
    withheld: withheld === null ? [] : [...withheld].sort(),
  };
}

function sha256(bytes) {
  return crypto.createHash("sha256").update(bytes).digest("hex");
}
