// The manifest (FORMAT.md, "The manifest"): bytes, TOML, format line, values, schema and
// consistency, each step rejecting with its own codes before the next.

import { readFileSync } from "node:fs";
import { parse as parseToml } from "smol-toml";
import { Problem, Rejected } from "./problems.mjs";
import { fold, foldersOf, pathProblem } from "./paths.mjs";

const WHERE = "manifest.toml";
const FORMAT_RE = /^reprobundle\/([0-9]+)(?:\.([0-9]+))?$/;
const KNOWN_MINOR = 2n;
const MAX_DEPTH = 32;
const MAX_EPOCH = 8n ** 11n - 1n;
const SCHEMA = JSON.parse(readFileSync(new URL("../../manifest-v1.schema.json", import.meta.url), "utf8"));
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const isTable = (v) => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
const one = (code, message) => new Rejected(message, [new Problem(WHERE, code, message)]);

// A value as a message shows it (TOML integers are BigInts, which JSON cannot write).
function shown(value) {
  if (value === undefined) return "missing";
  if (typeof value === "bigint") return String(value);
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function dotted(path) {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : out ? `.${part}` : part;
  return out || "(top level)";
}

// The manifest's bytes read strictly: { doc, format, warnings } or a rejection.
export function parseManifest(bytes) {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw one("manifest.bom", "starts with a byte-order mark; it must be plain UTF-8");
  }
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw one("manifest.encoding", "is not UTF-8");
  }
  let doc;
  try {
    doc = parseToml(text, { integersAsBigInt: true });
  } catch (error) {
    if (error instanceof RangeError || /nested/.test(String(error.message))) {
      throw one("manifest.too_deep", "is nested too deeply to read");
    }
    throw one("manifest.toml", `is not valid TOML: ${error.message.split("\n")[0]}`);
  }
  const why = notToml10(text) ?? integerBeyond64Bits(doc);
  if (why) throw one("manifest.toml", `is not valid TOML 1.0: ${why}`);
  const format = doc.format;
  const match = typeof format === "string" ? FORMAT_RE.exec(format) : null;
  if (match === null) {
    throw one("manifest.format", `format is ${shown(format)}; expected 'reprobundle/<major>[.<minor>]'`);
  }
  if (BigInt(match[1]) !== 1n) {
    throw one("manifest.unsupported_major", `format = '${format}': this verifier reads reprobundle/1 only`);
  }
  const newer = BigInt(match[2] ?? "0") > KNOWN_MINOR;
  const warnings = newer ? [`the bundle uses format ${format}, newer than this verifier knows`] : [];

  let problems = valueProblems(doc);
  if (problems.length) throw new Rejected("the manifest is not valid", problems);
  problems = [];
  for (const error of validate(SCHEMA, doc, [])) {
    if (newer && error.keyword === "additionalProperties") {
      warnings.push(`${dotted(error.path)}: ${error.message} (ignored)`);
      continue;
    }
    problems.push(new Problem(dotted(error.path), "manifest.schema", error.message));
  }
  if (problems.length) throw new Rejected("the manifest does not follow the format", problems);
  problems = consistencyProblems(doc);
  if (problems.length) throw new Rejected("the manifest is not consistent", problems);
  return { doc, format, warnings, top: `${doc.bundle.name}-${doc.bundle.version}` };
}

// What smol-toml reads but TOML 1.0 does not have (it reads TOML 1.1), in a document it
// parsed: an inline table over
// several lines or with a trailing comma, the escapes \e and \xHH, a time without seconds;
// and a date that does not exist (February 30th, the year 0). A message, or null. Strings
// and comments are skipped as TOML writes them; a document that does not parse is left to
// the parser.
export function notToml10(text) {
  const stack = [];
  let last = "";
  let outside = "";
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      i += quote.length;
      for (;;) {
        if (i >= text.length || (quote.length === 1 && text[i] === "\n")) return null;
        if (c === '"' && text[i] === "\\") {
          if (text[i + 1] === "e" || text[i + 1] === "x") return `the escape \\${text[i + 1]} is TOML 1.1`;
          i += 2;
          continue;
        }
        if (text.startsWith(quote, i)) {
          i += quote.length;
          for (let extra = 0; quote.length === 3 && extra < 2 && text[i] === c; extra++) i++;
          break;
        }
        i++;
      }
      last = c;
      outside += " S ";
      continue;
    }
    if (c === "\n" && stack.at(-1) === "{") return "an inline table over several lines is TOML 1.1";
    if (c === "{" || c === "[") stack.push(c);
    else if (c === "}" || c === "]") {
      if (c === "}" && last === ",") return "a trailing comma in an inline table is TOML 1.1";
      stack.pop();
    }
    if (!" \t\r\n".includes(c)) last = c;
    outside += c;
    i++;
  }
  if (/(?<![0-9:+\-])[0-9]{2}:[0-9]{2}(?![0-9]|:[0-9])/.test(outside)) return "a time without seconds is TOML 1.1";
  for (const [, y, m, d] of outside.matchAll(/(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])/g)) {
    const [year, month, day] = [Number(y), Number(m), Number(d)];
    const days = new Date(Date.UTC(2000 + (year % 400), month, 0)).getUTCDate();
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > days) return `${y}-${m}-${d} is not a date`;
  }
  return null;
}

// TOML 1.0's integers are 64-bit: one that is not is an error (smol-toml reads any as a
// BigInt). A message, or null.
function integerBeyond64Bits(doc) {
  const stack = [doc];
  while (stack.length) {
    const item = stack.pop();
    if (Array.isArray(item)) stack.push(...item);
    else if (isTable(item)) stack.push(...Object.values(item));
    else if (typeof item === "bigint" && (item < -(2n ** 63n) || item >= 2n ** 63n)) {
      return `the integer ${String(item).slice(0, 24)}... does not fit in 64 bits`;
    }
  }
  return null;
}

// Depth, NaN and infinities, and values of a type the format does not have (dates).
function valueProblems(doc) {
  const problems = [];
  const stack = [[doc, []]];
  while (stack.length) {
    const [item, at] = stack.pop();
    if (at.length > MAX_DEPTH) {
      problems.push(new Problem(dotted(at), "manifest.too_deep", `nested deeper than ${MAX_DEPTH}`));
      return problems;
    }
    if (typeof item === "number" && !Number.isFinite(item)) {
      problems.push(new Problem(dotted(at), "manifest.not_finite", "NaN or infinity is not allowed"));
    } else if (Array.isArray(item)) {
      item.forEach((v, i) => stack.push([v, [...at, i]]));
    } else if (isTable(item)) {
      for (const [k, v] of Object.entries(item)) stack.push([v, [...at, k]]);
    } else if (!["string", "bigint", "number", "boolean"].includes(typeof item)) {
      problems.push(new Problem(dotted(at), "manifest.type", "a date or time is not allowed"));
    }
  }
  return problems;
}

// -- the JSON Schema keywords the manifest's schema uses ----------------------------------

const isInteger = (v) => typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));
const TYPES = {
  object: isTable,
  array: Array.isArray,
  string: (v) => typeof v === "string",
  integer: isInteger,
};
const length = (s) => [...s].length;
const patterns = new Map();
function pattern(source) {
  if (!patterns.has(source)) patterns.set(source, new RegExp(source.replaceAll("\\Z", "$"), "u"));
  return patterns.get(source);
}

function resolve(schema) {
  return schema.$ref ? resolve(schema.$ref.split("/").slice(1).reduce((s, k) => s[k], SCHEMA)) : schema;
}

function validate(schemaIn, value, path) {
  const schema = resolve(schemaIn);
  const errors = [];
  const error = (keyword, message) => errors.push({ keyword, path, message });
  if (schema.type && !TYPES[schema.type](value)) {
    error("type", `is not of type '${schema.type}'`);
    return errors;
  }
  if (schema.enum && !schema.enum.includes(value)) error("enum", `is not one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === "string") {
    if (schema.minLength !== undefined && length(value) < schema.minLength) error("minLength", "is too short");
    if (schema.maxLength !== undefined && length(value) > schema.maxLength) error("maxLength", "is too long");
    if (schema.pattern && !pattern(schema.pattern).test(value)) error("pattern", `does not match ${schema.pattern}`);
  }
  if (isInteger(value) && schema.minimum !== undefined && value < schema.minimum) {
    error("minimum", `is less than the minimum of ${schema.minimum}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) error("minItems", "should be non-empty");
    if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v, plain))).size !== value.length) {
      error("uniqueItems", "has non-unique elements");
    }
    if (schema.items) value.forEach((v, i) => errors.push(...validate(schema.items, v, [...path, i])));
  }
  if (isTable(value)) {
    const keys = Object.keys(value);
    if (schema.minProperties !== undefined && keys.length < schema.minProperties) {
      error("minProperties", "should be non-empty");
    }
    for (const key of schema.required ?? []) {
      if (!keys.includes(key)) error("required", `'${key}' is a required property`);
    }
    const properties = schema.properties ?? {};
    const extra = keys.filter((k) => !(k in properties));
    for (const key of keys) {
      if (key in properties) errors.push(...validate(properties[key], value[key], [...path, key]));
    }
    if (schema.additionalProperties === false && extra.length) {
      error("additionalProperties", `additional properties are not allowed (${extra.join(", ")} unexpected)`);
    } else if (isTable(schema.additionalProperties)) {
      for (const key of extra) errors.push(...validate(schema.additionalProperties, value[key], [...path, key]));
    }
  }
  if (schema.oneOf) {
    const valid = schema.oneOf.filter((s) => validate(s, value, path).length === 0).length;
    if (valid !== 1) error("oneOf", "is not valid under exactly one of the given schemas");
  }
  return errors;
}

function plain(_key, value) {
  return typeof value === "bigint" ? `${value}n` : value;
}

// -- consistency: the rules a schema cannot express ---------------------------------------

function consistencyProblems(doc) {
  const problems = [];
  const add = (path, code, message) =>
    problems.push(new Problem(dotted(path), code.startsWith("manifest.") ? code : `manifest.${code}`, message));
  const epoch = doc.environment.source_date_epoch;
  if (typeof epoch !== "bigint" || epoch > MAX_EPOCH) {
    add(["environment", "source_date_epoch"], "manifest.epoch", `must be a whole number of seconds from 0 to ${MAX_EPOCH}`);
  }
  const seen = new Map();
  const listed = new Set();
  doc.files.forEach((entry, i) => {
    const path = entry.path;
    if (typeof entry.size !== "bigint") add(["files", i, "size"], "manifest.size", "must be a whole number of bytes");
    const why = pathProblem(path);
    if (why) {
      add(["files", i, "path"], "path.invalid", `'${path}' ${why}`);
      return;
    }
    if (["manifest.toml", "signatures"].includes(path.split("/")[0])) {
      add(["files", i, "path"], "path.reserved", `'${path}' is a reserved name`);
    }
    const key = fold(path);
    if (seen.has(key)) add(["files", i, "path"], "path.duplicate", `'${path}' collides with '${seen.get(key)}'`);
    seen.set(key, path);
    listed.add(path);
  });
  const dirs = foldersOf(listed);
  for (const clash of [...listed].filter((p) => dirs.has(p)).sort()) {
    add(["files"], "path.file_and_folder", `'${clash}' is both a file and a folder`);
  }
  const caseIds = new Set();
  doc.cases.forEach((c, i) => {
    if (caseIds.has(c.id)) add(["cases", i, "id"], "id.duplicate", `case id '${c.id}' is used twice`);
    caseIds.add(c.id);
    if (c.expect_reasons?.length && c.expect !== "fail") {
      add(["cases", i, "expect_reasons"], "case.expect_reasons", "only a case that expects fail names reasons");
    }
    if ("kind" in c && c.expect !== "fail") {
      add(["cases", i, "kind"], "case.kind", "only a case that expects fail is a control or a finding");
    } else if (c.kind === "finding" && ["reprobundle/1", "reprobundle/1.1"].includes(doc.format)) {
      add(["cases", i, "kind"], "case.format", "a finding needs format 'reprobundle/1.2'");
    }
    for (const [role, ref] of Object.entries(c.inputs)) {
      for (const path of typeof ref === "string" ? [ref] : ref) {
        const why = pathProblem(path);
        if (why) add(["cases", i, "inputs", role], "path.invalid", `'${path}' ${why}`);
        else if (!listed.has(path) && !dirs.has(path)) {
          add(["cases", i, "inputs", role], "case.unlisted_input", `'${path}' is not one of the bundle's files or folders`);
        }
      }
    }
  });
  const code = doc.code ?? [];
  const codeNames = new Set();
  if (code.length && doc.format === "reprobundle/1") {
    add(["code"], "code.format", "bundled code needs format 'reprobundle/1.1'");
  }
  code.forEach((entry, i) => {
    if (codeNames.has(entry.name)) add(["code", i, "name"], "id.duplicate", `code name '${entry.name}' is used twice`);
    codeNames.add(entry.name);
    const path = entry.entry.slice(0, entry.entry.lastIndexOf(":"));
    if (!listed.has(path)) add(["code", i, "entry"], "code.unlisted", `'${path}' is not one of the bundle's files`);
  });
  doc.cases.forEach((c, i) => {
    if (c.checker.startsWith("bundle:") && !codeNames.has(c.checker.slice("bundle:".length))) {
      add(["cases", i, "checker"], "code.unknown", `no code entry is named '${c.checker}'`);
    }
  });
  const claimIds = new Set();
  doc.claims.forEach((claim, i) => {
    if (claimIds.has(claim.id)) add(["claims", i, "id"], "id.duplicate", `claim id '${claim.id}' is used twice`);
    claimIds.add(claim.id);
    claim.cases.forEach((id, j) => {
      if (!caseIds.has(id)) add(["claims", i, "cases", j], "claim.unknown_case", `no case has id '${id}'`);
    });
  });
  return problems;
}
