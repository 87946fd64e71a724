// The path rules and folding of FORMAT.md ("Path rules").

const BIDI = new Set([
  0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x061c,
]);
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/is;
const NOT_PORTABLE = /[\\:*?"<>|]/;
export const MAX_PATH_BYTES = 1024;
const MAX_COMPONENT_BYTES = 255;

export const utf8Length = (text) => Buffer.byteLength(text, "utf8");

// Why ``path`` is not a portable relative path, or null. ``invalid``: the name's bytes were
// not UTF-8 (a tar name), which no rule lets through.
export function pathProblem(path, invalid = false) {
  if (!path) return "empty path";
  if (path.includes("\0")) return "contains a NUL byte";
  if (invalid || hasLoneSurrogate(path)) return "is not valid UTF-8";
  for (const char of path) {
    const code = char.codePointAt(0);
    if (code < 0x20 || code === 0x7f) return "contains a control character";
    if (BIDI.has(code)) return "contains a bidirectional-text control character";
  }
  if (path.startsWith("/")) return "is an absolute path";
  if (path.includes("\\")) return "contains a backslash";
  if (/^[A-Za-z]:/.test(path)) return "starts with a drive letter";
  if (path.normalize("NFC") !== path) return "is not in Unicode NFC";
  if (utf8Length(path) > MAX_PATH_BYTES) return `is longer than ${MAX_PATH_BYTES} bytes`;
  for (const part of path.split("/")) {
    if (part === "") return "has an empty component (// or a trailing /)";
    if (part === ".") return "has a '.' component";
    if (part === "..") return "has a '..' component";
    if (utf8Length(part) > MAX_COMPONENT_BYTES) {
      return `has a component longer than ${MAX_COMPONENT_BYTES} bytes`;
    }
    if (RESERVED.test(part)) return `has a Windows-reserved name '${part}'`;
    if (part.endsWith(" ") || part.endsWith(".")) return "has a component ending in a space or a dot";
  }
  if (NOT_PORTABLE.test(path)) return 'has a character not portable to Windows (\\:*?"<>|)';
  return null;
}

function hasLoneSurrogate(text) {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      i++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return true;
    }
  }
  return false;
}

// Full case folding (Unicode's CaseFolding.txt, statuses C and F), one code point at a
// time: upper case, then lower case (ß -> SS -> ss; each code point alone, so no context
// rule such as Greek final sigma applies), except where that is not the folding: the
// dotless ı has no folding (its upper case I would make it i), and ẞ folds to ss (its
// lower case is ß).
const NOT_BY_CASES = new Map([
  ["\u0131", "\u0131"],
  ["\u1e9e", "ss"],
]);
function caseFold(text) {
  let out = "";
  for (const char of text) out += NOT_BY_CASES.get(char) ?? char.toUpperCase().toLowerCase();
  return out;
}

// The key under which two names collide on a case-insensitive file system.
export function fold(path) {
  return caseFold(path.normalize("NFKD")).normalize("NFC");
}

// Every folder the paths lie in, with their ancestors.
export function foldersOf(paths) {
  const folders = new Set();
  for (const path of paths) {
    let parent = path.slice(0, Math.max(path.lastIndexOf("/"), 0));
    while (parent && !folders.has(parent)) {
      folders.add(parent);
      parent = parent.slice(0, Math.max(parent.lastIndexOf("/"), 0));
    }
  }
  return folders;
}
