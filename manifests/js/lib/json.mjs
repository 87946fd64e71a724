// Strict JSON (RFC 8259) for the signature files and the withheld record: no duplicate key
// in an object, no NaN or infinity (nor a number too large for a float), nothing after the
// value, at most ``maxDepth`` containers deep. Objects are Maps; an integer written without
// a fraction or an exponent is a BigInt (``29`` and ``29.0`` stay apart), any other number
// a Number.

export function strictJson(text, maxDepth = 64) {
  let pos = 0;
  let depth = 0;
  const fail = (why) => {
    throw new SyntaxError(`${why} at character ${pos}`);
  };
  const ws = () => {
    while (pos < text.length && " \t\n\r".includes(text[pos])) pos++;
  };
  const value = () => {
    ws();
    const c = text[pos];
    if (c === "{" || c === "[") {
      if (++depth > maxDepth) fail(`nested deeper than ${maxDepth} levels`);
    }
    if (c === "{") {
      pos++;
      const out = new Map();
      ws();
      if (text[pos] === "}") {
        pos++;
        depth--;
        return out;
      }
      for (;;) {
        ws();
        if (text[pos] !== '"') fail("expected a key");
        const key = string();
        if (out.has(key)) fail(`duplicate key ${JSON.stringify(key)}`);
        ws();
        if (text[pos++] !== ":") fail("expected ':'");
        out.set(key, value());
        ws();
        const next = text[pos++];
        if (next === "}") {
          depth--;
          return out;
        }
        if (next !== ",") fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      pos++;
      const out = [];
      ws();
      if (text[pos] === "]") {
        pos++;
        depth--;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        const next = text[pos++];
        if (next === "]") {
          depth--;
          return out;
        }
        if (next !== ",") fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    for (const [word, result] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, pos)) {
        pos += word.length;
        return result;
      }
    }
    const number = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(pos));
    if (!number) fail("unexpected character");
    pos += number[0].length;
    if (number[2] === undefined && number[3] === undefined) return BigInt(number[0]);
    const parsed = Number(number[0]);
    if (!Number.isFinite(parsed)) fail("a number too large");
    return parsed;
  };
  const string = () => {
    pos++;
    let out = "";
    for (;;) {
      if (pos >= text.length) fail("unterminated string");
      const c = text[pos++];
      if (c === '"') return out;
      if (c < " ") fail("a control character in a string");
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = text[pos++];
      const simple = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }[e];
      if (simple !== undefined) out += simple;
      else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(pos, pos + 4))) {
        out += String.fromCharCode(parseInt(text.slice(pos, pos + 4), 16));
        pos += 4;
      } else fail("an invalid escape");
    }
  };
  const result = value();
  ws();
  if (pos !== text.length) fail("extra data after the value");
  return result;
}
