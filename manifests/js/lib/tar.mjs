// The tar stream (FORMAT.md, "The tar stream"): ustar headers, pax extended headers and
// GNU long names, zero padding, and nothing but zeros after the end-of-archive marker.

import { reject } from "./problems.mjs";

const BLOCK = 512;
const MAX_HEADER_DATA = 1 << 20;
const NO_DATA = new Set(["1", "2", "3", "4", "5", "6"]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

// Text of a NUL-terminated field (``toNul``), or of all the bytes: ``valid`` is false
// when they are not UTF-8.
function text(bytes, toNul = true) {
  const end = toNul ? bytes.indexOf(0) : -1;
  const raw = end < 0 ? bytes : bytes.subarray(0, end);
  try {
    return { text: utf8.decode(raw), valid: true };
  } catch {
    return { text: Buffer.from(raw).toString("latin1"), valid: false };
  }
}

function number(bytes, what) {
  if (bytes[0] === 0x80 || bytes[0] === 0xff) {
    if (bytes[0] === 0xff) throw reject("archive.corrupt", "(archive)", `a tar header has a negative ${what}`);
    let value = 0n;
    for (const b of bytes.subarray(1)) value = value * 256n + BigInt(b);
    return Number(value);
  }
  const end = bytes.indexOf(0);
  const digits = Buffer.from(end < 0 ? bytes : bytes.subarray(0, end))
    .toString("latin1")
    .replace(/^ +| +$/g, "");
  if (/^[0-7]*$/.test(digits)) return digits ? parseInt(digits, 8) : 0;
  throw reject("archive.corrupt", "(archive)", `a tar header has an invalid ${what}`);
}

function checksumOk(block) {
  const field = block.subarray(148, 156);
  const end = field.indexOf(0);
  const stored = Buffer.from(end < 0 ? field : field.subarray(0, end))
    .toString("latin1")
    .replace(/^ +| +$/g, "");
  if (!stored || !/^[0-7]+$/.test(stored)) return false;
  const want = parseInt(stored, 8);
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : block[i];
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  return want === unsigned || want === signed;
}

function paxRecords(data, where) {
  const records = new Map();
  let pos = 0;
  while (pos < data.length) {
    let space = -1;
    for (let i = pos; i < Math.min(pos + 20, data.length); i++) {
      if (data[i] === 0x20) {
        space = i;
        break;
      }
    }
    const lengthText = space > pos ? Buffer.from(data.subarray(pos, space)).toString("latin1") : "";
    if (!/^[0-9]+$/.test(lengthText)) throw reject("archive.corrupt", where, "a pax header record has no valid length");
    const end = pos + Number(lengthText);
    const record = data.subarray(space + 1, Math.max(end, space + 1));
    const equals = record.indexOf(0x3d);
    if (end > data.length || record.length === 0 || record[record.length - 1] !== 0x0a || equals < 0) {
      throw reject("archive.corrupt", where, "a pax header record is malformed");
    }
    let key;
    try {
      key = utf8.decode(record.subarray(0, equals));
    } catch {
      throw reject("archive.corrupt", where, "a pax header key is not UTF-8");
    }
    // the value whole: a NUL in it is part of it (a path with one breaks the path rules),
    // unlike a header field or a GNU long name, which end at their first NUL
    const value = text(record.subarray(equals + 1, record.length - 1), false);
    records.set(key, value);
    pos = end;
  }
  return records;
}

// The members of a tar stream held whole in ``data``: each ``{name, nameValid, type,
// size, linkname, pax, data}``. The caller judges each member as it comes (``onMember``
// may throw to stop): the padding and tail rules are checked here as reading goes.
export function* members(data) {
  let pos = 0;
  let headers = 0;
  let current = "(archive)";
  const take = (n, where) => {
    if (pos + n > data.length) throw reject("archive.truncated", where, "the archive ends inside this member");
    const out = data.subarray(pos, pos + n);
    pos += n;
    return out;
  };
  const payload = (size, where) => {
    const out = take(size, where);
    const padding = (BLOCK - (size % BLOCK)) % BLOCK;
    const pad = take(padding, where);
    if (pad.some((b) => b !== 0)) {
      throw reject(
        "archive.hidden_data",
        where,
        "non-zero bytes hide in the padding after this member's data (a member larger than its declared size?)",
      );
    }
    return out;
  };
  const small = (header, what) => {
    if (header.size > MAX_HEADER_DATA) {
      throw reject("limit.header_size", "(archive)", `${what} of ${header.size} bytes (at most ${MAX_HEADER_DATA})`);
    }
    return payload(header.size, current);
  };
  for (;;) {
    let pax = new Map();
    let longName = null;
    let header;
    for (;;) {
      if (pos === data.length) {
        throw reject("archive.truncated", "(archive)", "the archive ends without its end-of-archive marker");
      }
      const block = take(BLOCK, "(archive)");
      if (block.every((b) => b === 0)) {
        if (data.subarray(pos).some((b) => b !== 0)) {
          throw reject("archive.trailing_data", "(archive)", "there are bytes after the tar end-of-archive marker");
        }
        return;
      }
      const first = headers === 0;
      headers++;
      const magic = Buffer.from(block.subarray(257, 265)).toString("latin1");
      if (!checksumOk(block) || (magic !== "ustar\u000000" && magic !== "ustar  \u0000")) {
        if (first) throw reject("archive.not_tar", "(archive)", "the stream is not a tar archive");
        throw reject("archive.corrupt", "(archive)", "a tar header is corrupt (bad checksum or not ustar)");
      }
      let name = text(block.subarray(0, 100));
      if (magic.startsWith("ustar\u0000") && block[345] !== 0) {
        const prefix = text(block.subarray(345, 500));
        name = { text: `${prefix.text}/${name.text}`, valid: prefix.valid && name.valid };
      }
      const type = block[156] === 0 ? "\u0000" : String.fromCharCode(block[156]);
      header = {
        name: name.text,
        nameValid: name.valid,
        type,
        size: number(block.subarray(124, 136), "size"),
        linkname: type === "1" || type === "2" ? text(block.subarray(157, 257)).text : "",
        pax: new Map(),
      };
      if (type === "x") {
        for (const [k, v] of paxRecords(small(header, "a pax header"), header.name)) pax.set(k, v);
        continue;
      }
      if (type === "L") {
        longName = text(small(header, "a GNU long name"));
        continue;
      }
      if (type === "K") {
        small(header, "a GNU long link name");
        continue;
      }
      if (type === "g") throw reject("archive.global_header", header.name, "a pax global header; bundles have none");
      if (type === "S") throw reject("member.type", header.name, "is a sparse file");
      break;
    }
    if (longName !== null) {
      header.name = longName.text;
      header.nameValid = longName.valid;
    }
    if (pax.has("path")) {
      header.name = pax.get("path").text;
      header.nameValid = pax.get("path").valid;
    }
    if (header.type === "5" && header.name.endsWith("/")) header.name = header.name.slice(0, -1);
    if (pax.size) {
      if (pax.has("size")) {
        const size = pax.get("size").text;
        if (!/^[0-9]+$/.test(size)) throw reject("archive.corrupt", header.name, "the pax size is not a number");
        header.size = Number(size);
      }
      header.pax = pax;
    }
    current = header.name;
    const owed = NO_DATA.has(header.type) ? 0 : header.size;
    const name = header.name;
    // the data is read only when the caller asks for it (a limit is judged on the header)
    let read = false;
    header.data = () => {
      read = true;
      return payload(owed, name);
    };
    yield header;
    if (!read) payload(owed, name);
  }
}
