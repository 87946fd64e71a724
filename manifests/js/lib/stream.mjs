// The compressed stream (FORMAT.md, "The compressed stream"): one gzip member or one zstd
// frame, nothing after it. The frame structure is walked here, so that a truncation,
// a second frame or trailing bytes are found by this code; fzstd decodes the blocks, and
// the content checksum (XXH64) is checked here, as fzstd does not check it.

import { constants as bufferConstants } from "node:buffer";
import zlib from "node:zlib";
import { Decompress as ZstdStream } from "fzstd";
import { Rejected, reject } from "./problems.mjs";

const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const ZSTD_MAX_WINDOW = 1 << 23;
const ZSTD_MAX_BLOCK = 1 << 17;

function startsWith(data, magic) {
  return data.length >= magic.length && magic.every((b, i) => data[i] === b);
}

export function codecOf(data) {
  if (startsWith(data, GZIP_MAGIC)) return "gzip";
  if (startsWith(data, ZSTD_MAGIC)) return "zstd";
  return null;
}

// The decompressed bytes of the whole file, or a rejection. Never more than the limits
// allow is decompressed: ``limits.total_bytes`` (+ 1 MiB), and the bomb ratio
// (``limits.ratio`` times the file's size, once past ``limits.ratio_floor``).
export function decompress(data, name, limits) {
  const total = limits.total_bytes + 2 ** 20;
  const byRatio = Math.max(limits.ratio_floor, limits.ratio * Math.max(data.length, 1));
  // and never more than one Buffer holds (the tar is held whole): a lower limit of this
  // verifier's, reported as the total's
  const held = bufferConstants.MAX_LENGTH - 1;
  const bound = {
    most: Math.min(total, byRatio, held),
    passed: () =>
      byRatio < Math.min(total, held)
        ? reject("limit.ratio", "(archive)", `decompresses more than ${limits.ratio}:1 (a compression bomb?); raise with --max-ratio`)
        : tooLarge(Math.min(total, held)),
  };
  const found = decompressBounded(data, name, bound);
  if (ratioPassedOnTheWay(data, found.codec, found.plain.length, limits, bound)) throw bound.passed();
  return found;
}

// The ratio is a reader's as it goes (FORMAT.md, "Limits"): the bytes decompressed so far
// against the compressed bytes read so far, the file being read 4 bytes (its magic) and
// then 1 MiB at a time. Here the file was decompressed whole; what each of its prefixes
// 4 + k MiB decompresses to is counted (only while the ratio could be passed at all, and
// never more than the ratio allows).
const STEP = 2 ** 20;

function ratioPassedOnTheWay(data, codec, total, limits, bound) {
  if (total <= limits.ratio_floor) return false;
  for (let read = 4 + STEP; read < data.length && limits.ratio * read < total; read += STEP) {
    const most = Math.max(limits.ratio_floor, limits.ratio * read);
    const prefix = codec === "gzip" ? data.subarray(0, read) : bound.zstdFrame.subarray(0, Math.max(read - bound.zstdShift, 0));
    if (producedBeyond(prefix, codec, most, bound)) return true;
  }
  return false;
}

// Whether the first bytes of a stream decompress to more than ``most`` bytes.
function producedBeyond(prefix, codec, most, bound) {
  if (codec === "gzip") {
    try {
      const options = { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: most + 1 };
      return zlib.inflateRawSync(prefix.subarray(bound.bodyStart), options).length > most;
    } catch (error) {
      return error instanceof RangeError || error.code === "ERR_BUFFER_TOO_LARGE";
    }
  }
  let size = 0;
  const stream = new ZstdStream((piece) => {
    size += piece.length;
    if (size > most) throw new RangeError("passed");
  });
  try {
    for (let at = 0; at < prefix.length; at += 1 << 16) stream.push(prefix.subarray(at, Math.min(at + (1 << 16), prefix.length)), false);
  } catch (error) {
    return error instanceof RangeError && error.message === "passed";
  }
  return false;
}

function decompressBounded(data, name, bound) {
  const codec = codecOf(data);
  if (codec === null) {
    const kind =
      data.length === 0
        ? "empty"
        : data[0] === 0x50 && data[1] === 0x4b
          ? "a zip file"
          : "neither gzip- nor zstd-compressed";
    throw reject(
      "archive.not_compressed_tar",
      name,
      `is ${kind}; a bundle is a compressed tar (*.bundle.tar.gz or *.bundle.tar.zst)`,
    );
  }
  return { codec, plain: codec === "gzip" ? gunzip(data, bound) : unzstd(data, bound) };
}

function tooLarge(maxOutput) {
  return reject(
    "limit.total_size",
    "(archive)",
    `decompresses to more than ${maxOutput} bytes (raise with --max-total-bytes)`,
  );
}

// -- gzip (RFC 1952) ---------------------------------------------------------------------

// CRC-32 (RFC 1952): Node's own from 20.15, else this table's (Node 20 before 20.15 has none).
const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
function crc32Here(bytes) {
  let c = -1;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
const crc32 = zlib.crc32 ?? crc32Here;

function gunzip(data, bound) {
  const truncated = () =>
    reject("archive.truncated", "(archive)", "the gzip stream ends early: the file is truncated");
  const corrupt = (why) => reject("archive.corrupt", "(archive)", `the gzip stream is corrupt: ${why}`);
  if (data.length < 10) throw truncated();
  if (data[2] !== 8) throw corrupt("unknown compression method");
  const flags = data[3];
  if (flags & 0xe0) throw corrupt("reserved header flags are set");
  let pos = 10;
  if (flags & 4) {
    if (pos + 2 > data.length) throw truncated();
    pos += 2 + (data[pos] | (data[pos + 1] << 8));
  }
  for (const bit of [8, 16]) {
    if (flags & bit) {
      while (pos < data.length && data[pos] !== 0) pos++;
      if (pos >= data.length) throw truncated();
      pos++;
    }
  }
  if (pos > data.length) throw truncated();
  if (flags & 2) {
    // FHCRC: the low 16 bits of the CRC-32 of the header's bytes before it
    if (pos + 2 > data.length) throw truncated();
    if ((crc32(data.subarray(0, pos)) & 0xffff) !== data.readUInt16LE(pos)) {
      throw corrupt("the CRC-16 of the gzip header is wrong");
    }
    pos += 2;
  }
  bound.bodyStart = pos;
  let result;
  try {
    // (in memory: this verifier holds the tar stream whole, up to what a Buffer holds)
    const most = bound.most + 1;
    result = zlib.inflateRawSync(data.subarray(pos), { info: true, maxOutputLength: most });
  } catch (error) {
    if (error instanceof RangeError || error.code === "ERR_BUFFER_TOO_LARGE") throw bound.passed();
    if (error.code === "Z_BUF_ERROR") throw truncated();
    throw corrupt(error.message);
  }
  const plain = result.buffer;
  if (plain.length > bound.most) throw bound.passed();
  const end = pos + result.engine.bytesWritten;
  if (end + 8 > data.length) throw truncated();
  const crc = data.readUInt32LE(end);
  const size = data.readUInt32LE(end + 4);
  if (crc !== crc32(plain) >>> 0) throw corrupt("the CRC-32 of the data is wrong");
  if (size !== plain.length % 2 ** 32) throw corrupt("the length of the data is wrong");
  if (end + 8 !== data.length) {
    throw reject(
      "archive.trailing_data",
      "(archive)",
      "there are bytes after the end of the compressed stream (a second stream, or another format appended)",
    );
  }
  return plain;
}

// -- zstd (RFC 8878) ---------------------------------------------------------------------

function unzstd(data, bound) {
  const truncated = () =>
    reject("archive.truncated", "(archive)", "the zstd stream ends early: the file is truncated");
  const corrupt = (why) => reject("archive.corrupt", "(archive)", why);
  if (data.length < 5) throw truncated();
  const descriptor = data[4];
  if (descriptor & 0x08) throw corrupt("the zstd frame header sets a reserved bit");
  if (descriptor & 0x03) throw corrupt("the zstd frame needs a dictionary; bundles use none");
  const singleSegment = (descriptor >> 5) & 1;
  const fcsFlag = descriptor >> 6;
  const hasChecksum = (descriptor >> 2) & 1;
  let pos = 5;
  let window = null;
  if (!singleSegment) {
    if (pos >= data.length) throw truncated();
    const wd = data[pos++];
    const log = 10 + (wd >> 3);
    const base = 2 ** log;
    window = base + (base / 8) * (wd & 7);
  }
  const fcsSize = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag];
  if (pos + fcsSize > data.length) throw truncated();
  let contentSize = null;
  if (fcsSize) {
    contentSize = 0;
    for (let i = fcsSize - 1; i >= 0; i--) contentSize = contentSize * 256 + data[pos + i];
    if (fcsSize === 2) contentSize += 256;
  }
  pos += fcsSize;
  const blocksStart = pos;
  if (window === null) window = contentSize;
  if (window > ZSTD_MAX_WINDOW) {
    throw corrupt(`the zstd frame asks for a window of ${window} bytes (at most ${ZSTD_MAX_WINDOW})`);
  }
  const blockMax = Math.min(window, ZSTD_MAX_BLOCK);
  let regenerated = 0;
  for (;;) {
    if (pos + 3 > data.length) throw truncated();
    const head = data[pos] | (data[pos + 1] << 8) | (data[pos + 2] << 16);
    pos += 3;
    const last = head & 1;
    const type = (head >> 1) & 3;
    const size = head >>> 3;
    if (type === 3) throw corrupt("the zstd stream is corrupt: a reserved block type");
    if (size > blockMax) throw corrupt("the zstd stream is corrupt: a block larger than allowed");
    const stored = type === 1 ? 1 : size;
    if (pos + stored > data.length) throw truncated();
    pos += stored;
    regenerated += type === 2 ? 0 : size;
    if (last) break;
  }
  if (hasChecksum) {
    if (pos + 4 > data.length) throw truncated();
    pos += 4;
  }
  if (pos !== data.length) {
    throw reject(
      "archive.trailing_data",
      "(archive)",
      "there are bytes after the end of the compressed stream (a second stream, or another format appended)",
    );
  }
  if (contentSize !== null && contentSize > bound.most) throw bound.passed();
  // decoded a piece at a time, counted, and stopped at the bound
  const pieces = [];
  let size = 0;
  const stream = new ZstdStream((piece) => {
    size += piece.length;
    if (size > bound.most) throw bound.passed();
    pieces.push(piece);
  });
  // fzstd sizes its output by the frame content size and drops what does not fit: it is
  // given the frame without one (a window descriptor in its place), so that content longer
  // than declared is decoded, counted and refused below
  const frame = fcsSize ? withoutContentSize(data, descriptor, singleSegment ? window : null, blocksStart, pos) : data.subarray(0, pos);
  bound.zstdFrame = frame; // (for the ratio of its prefixes: the file's offset less shift)
  bound.zstdShift = pos - frame.length;
  try {
    for (let at = 0; at < frame.length; at += 1 << 16) stream.push(frame.subarray(at, Math.min(at + (1 << 16), frame.length)), at + (1 << 16) >= frame.length);
  } catch (error) {
    if (error instanceof Rejected) throw error;
    throw corrupt(`the zstd stream is corrupt: ${error.message}`);
  }
  const plain = Buffer.concat(pieces);
  if (contentSize !== null && plain.length !== contentSize) {
    throw corrupt("the zstd stream is corrupt: the content size differs from the frame header's");
  }
  if (hasChecksum) {
    const want = data.readUInt32LE(pos - 4);
    if (Number(xxh64(plain) & 0xffffffffn) !== want) {
      throw corrupt("the zstd stream is corrupt: the content checksum is wrong");
    }
  }
  return plain;
}

// The frame with its content size taken out of the header: the descriptor's content-size
// and single-segment bits cleared, and a window descriptor (the frame's own, or for a
// single segment the smallest power of two at least the content size, 1 KiB or more).
function withoutContentSize(data, descriptor, segmentWindow, blocksStart, end) {
  let windowDescriptor = data[5];
  if (segmentWindow !== null) {
    let exponent = 0;
    while (2 ** (10 + exponent) < segmentWindow) exponent++;
    windowDescriptor = exponent << 3;
  }
  return Buffer.concat([data.subarray(0, 4), Buffer.from([descriptor & 0x1f, windowDescriptor]), data.subarray(blocksStart, end)]);
}

// XXH64 (seed 0), the hash of a zstd frame's content checksum.
const M64 = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;
const rotl = (x, r) => ((x << r) | (x >> (64n - r))) & M64;
const round = (acc, lane) => (rotl((acc + lane * P2) & M64, 31n) * P1) & M64;

export function xxh64(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const n = bytes.length;
  let i = 0;
  let h;
  if (n >= 32) {
    const v = [(P1 + P2) & M64, P2, 0n, (M64 + 1n - P1) & M64];
    while (i + 32 <= n) {
      for (let j = 0; j < 4; j++) v[j] = round(v[j], view.getBigUint64(i + 8 * j, true));
      i += 32;
    }
    h = (rotl(v[0], 1n) + rotl(v[1], 7n) + rotl(v[2], 12n) + rotl(v[3], 18n)) & M64;
    for (const lane of v) h = (((h ^ round(0n, lane)) * P1) + P4) & M64;
  } else {
    h = P5;
  }
  h = (h + BigInt(n)) & M64;
  while (i + 8 <= n) {
    h ^= round(0n, view.getBigUint64(i, true));
    h = (rotl(h, 27n) * P1 + P4) & M64;
    i += 8;
  }
  if (i + 4 <= n) {
    h ^= (BigInt(view.getUint32(i, true)) * P1) & M64;
    h = (rotl(h, 23n) * P2 + P3) & M64;
    i += 4;
  }
  while (i < n) {
    h ^= (BigInt(bytes[i]) * P5) & M64;
    h = (rotl(h, 11n) * P1) & M64;
    i++;
  }
  h ^= h >> 33n;
  h = (h * P2) & M64;
  h ^= h >> 29n;
  h = (h * P3) & M64;
  return h ^ (h >> 32n);
}
