#!/usr/bin/env node
// A second, independent verifier of reprobundle/1 bundles: integrity and signatures only,
// written from manifests/FORMAT.md (it shares no code with the Python verifier). It never
// runs a checker, so it says nothing about a claim; `reprobundle verify` re-runs the cases.
//
//   node manifests/js/verify.mjs BUNDLE [--trust KEY.pub]... [--signature FILE.json]...
//        [--identity sha256:HEX]
//        [--max-members N] [--max-file-bytes N] [--max-total-bytes N]
//        [--max-manifest-bytes N] [--max-archive-bytes N] [--max-ratio N]
//        [--allow-unsigned] [--require-signature] [--json]
//   node manifests/js/verify.mjs --conformance manifests/conformance/vectors.json
//
// Exit codes: 0 intact, 3 rejected, 2 usage error. With --conformance: every vector of the
// suite verified as its options say, one JSON line each; 0 when all give the expected
// result and codes, 1 otherwise.

import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { constants as bufferConstants } from "node:buffer";
import { Rejected, reject, UsageError } from "./lib/problems.mjs";
import { readBundle } from "./lib/read.mjs";
import { describe, readTrustedKey } from "./lib/signatures.mjs";

const USAGE =
  "usage: node verify.mjs BUNDLE [--trust KEY.pub]... [--signature FILE.json]... [--identity sha256:HEX] " +
  "[--max-members N] [--max-file-bytes N] [--max-total-bytes N] [--max-manifest-bytes N] " +
  "[--max-archive-bytes N] [--max-ratio N] [--allow-unsigned] [--require-signature] [--json]";
const LIMIT_FLAGS = {
  "--max-members": "members",
  "--max-file-bytes": "file_bytes",
  "--max-total-bytes": "total_bytes",
  "--max-manifest-bytes": "manifest_bytes",
  "--max-archive-bytes": "archive_bytes",
  "--max-ratio": "ratio",
};
const NOT_RERUN =
  "checkers were not re-run: this verifier checks integrity and signatures only " +
  "(`reprobundle verify` re-runs the cases and judges the claims)";

function parseArguments(argv) {
  const options = {
    bundle: null,
    trust: [],
    signatures: [],
    identity: null,
    limits: {},
    json: false,
    allowUnsigned: false,
    requireSignature: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--json") options.json = true;
    else if (arg === "--allow-unsigned") options.allowUnsigned = true;
    else if (arg === "--require-signature") options.requireSignature = true;
    else if (arg === "--trust") options.trust.push(value());
    else if (arg === "--signature") options.signatures.push(value());
    else if (arg === "--identity" || arg === "--expect-manifest-sha256") {
      const pin = value();
      if (!/^(sha256:)?[0-9a-fA-F]{64}$/.test(pin)) throw new UsageError(`${arg} takes sha256:HEX (64 hex digits)`);
      options.identity = pin.replace(/^sha256:/, "").toLowerCase();
    } else if (arg in LIMIT_FLAGS) {
      const text = value();
      if (!/^[0-9]+$/.test(text)) throw new UsageError(`${arg} takes a whole number`);
      options.limits[LIMIT_FLAGS[arg]] = Number(text);
    } else if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option ${arg}`);
    else if (options.bundle === null) options.bundle = arg;
    else throw new UsageError(`one bundle at a time, observed ${arg}`);
  }
  if (options.bundle === null) throw new UsageError("no bundle given");
  if (options.requireSignature && !options.trust.length) {
    throw new UsageError("--require-signature needs --trust KEYFILE");
  }
  if (options.requireSignature && options.allowUnsigned) {
    throw new UsageError("--require-signature and --allow-unsigned contradict each other");
  }
  return options;
}

// At most ``limit + 1`` bytes of a regular file (a larger one is refused by its limit).
// ``unreadOver``: a file larger than ``limit`` is not read at all (null), so that no more
// than the limit is ever allocated for a bundle.
function readBounded(path, limit, unreadOver = false) {
  const fd = openSync(path, "r");
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`${path} is not a regular file`);
    if (unreadOver && stat.size > limit) return null;
    const chunks = [];
    let left = limit + 1;
    for (;;) {
      const buffer = Buffer.alloc(Math.min(left, 1 << 20));
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      chunks.push(buffer.subarray(0, n));
      left -= n;
      if (left <= 0) break;
    }
    return Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}

// A detached signature file, named as its problems will name it.
function detachedSignatures(paths, folder = ".") {
  return paths.map((path) => [`${path} (detached)`, readBounded(resolve(folder, path), 1 << 20)]);
}

// The most compressed bytes read: the reviewer's limit, and never more than one Buffer holds
// (this verifier holds the bundle in memory: FORMAT.md lets a verifier's limits be lower).
function archiveLimit(limits) {
  return Math.min(limits.archive_bytes ?? 16 * 2 ** 30, bufferConstants.MAX_LENGTH - 1);
}

function tooLarge(limit) {
  const error = reject("limit.archive_size", "(archive)", `the file is larger than ${limit} bytes (raise with --max-archive-bytes; this verifier holds at most ${bufferConstants.MAX_LENGTH - 1})`);
  return { result: "reject", exit: 3, codes: ["limit.archive_size"], error };
}

// One verification: { result, exit, codes, problems } or { result: "accept", found }.
function judge(data, name, trusted, options) {
  try {
    const found = readBundle(data, name, {
      trusted,
      identity: options.identity,
      limits: options.limits,
      detached: options.detached ?? [],
      allowUnsigned: options.allowUnsigned ?? false,
    });
    return { result: "accept", exit: 0, codes: [], found };
  } catch (error) {
    if (!(error instanceof Rejected)) throw error;
    const codes = [...new Set(error.problems.map((p) => p.code))].sort();
    return { result: "reject", exit: 3, codes, error };
  }
}

// Every vector of the conformance suite, as its options say.
function conformance(index) {
  const suite = JSON.parse(readFileSync(index, "utf8"));
  const folder = dirname(index);
  let differ = 0;
  for (const vector of suite.vectors) {
    const options = vector.options;
    const trusted = (options.trust ?? []).map((k) => readTrustedKey(readFileSync(join(folder, k), "utf8"), k));
    const identity = options.identity ? options.identity.replace(/^sha256:/, "") : null;
    const data = readFileSync(join(folder, vector.file));
    const detached = detachedSignatures(options.signatures ?? [], folder);
    let got;
    try {
      got = judge(data, vector.file.split("/").pop(), trusted, { identity, limits: options.limits ?? {}, detached });
    } catch (error) {
      // a defect of this verifier, never a verdict: reported as such, and it does not conform
      got = { result: "crash", exit: 5, codes: [`${error.name}: ${error.message}`] };
    }
    const expected = vector.expected;
    const same = got.result === expected.result && got.codes.join() === expected.codes.join();
    if (!same) differ++;
    const line = { name: vector.name, result: got.result, exit: got.exit, codes: got.codes, conforms: same };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  process.stderr.write(`${suite.vectors.length - differ} of ${suite.vectors.length} vectors as expected\n`);
  return differ ? 1 : 0;
}

function main(argv) {
  if (argv[0] === "--conformance" && argv.length === 2) return conformance(argv[1]);
  let options;
  let trusted;
  let data;
  try {
    options = parseArguments(argv);
    trusted = options.trust.map((path) => {
      let text;
      try {
        text = readFileSync(path, "utf8");
      } catch (error) {
        throw new UsageError(`cannot read key file ${path}: ${error.message}`);
      }
      return readTrustedKey(text, path);
    });
    try {
      options.detached = detachedSignatures(options.signatures);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot read a signature file: ${error.message}`);
    }
    try {
      data = readBounded(options.bundle, archiveLimit(options.limits), true);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot read ${options.bundle}: ${error.message}`);
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`verify.mjs: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  const verdict =
    data === null
      ? tooLarge(archiveLimit(options.limits))
      : judge(data, options.bundle.split("/").pop(), trusted, options);
  if (verdict.result === "reject") {
    const { error, codes } = verdict;
    if (options.json) {
      const problems = error.problems.map(({ where, code, message }) => ({ where, code, message }));
      const out = { result: "reject", exit: 3, codes, problems, checkers: "not re-run" };
      process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
    } else {
      process.stdout.write(`rejected: ${options.bundle}: ${error.message}\n`);
      for (const p of error.problems) process.stdout.write(`  ${p.code}  ${p.where}: ${p.message}\n`);
      process.stdout.write(`${NOT_RERUN}\n`);
    }
    return 3;
  }
  const found = verdict.found;
  if (options.json) {
    const out = {
      result: "accept",
      exit: 0,
      codes: [],
      identity: `sha256:${found.identity}`,
      bundle: `${found.name}-${found.version}`,
      compression: found.codec,
      files: found.files,
      signatures: found.signatures,
      withheld: found.withheld,
      warnings: found.warnings,
      checkers: "not re-run",
    };
    process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
  } else {
    process.stdout.write(
      `intact: ${found.name} ${found.version}, identity sha256:${found.identity}\n` +
        `  ${found.files} file(s) checked against the manifest (${found.codec}); ${describe(found.signatures)}\n` +
        (found.withheld.length
          ? `  redacted: ${found.withheld.length} file(s) withheld, bound by the manifest's digests: ${found.withheld.join(", ")}\n`
          : "") +
        found.warnings.map((w) => `  warning: ${w}\n`).join("") +
        `${NOT_RERUN}\n`,
    );
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
