// What JavaScript's RegExp answers for each (pattern, text) pair, as promptfoo's `regex`
// assertion asks it: `new RegExp(pattern).test(text)`, or "SyntaxError" when the pattern
// does not compile (promptfoo then fails the assertion). Run with Node (20 or later):
//   node tests/data/promptfoo/regex_cases.js > tests/data/promptfoo/regex_cases.json
// tests/checkers/test_promptfoo_regex.py checks that the Python re-run agrees with every
// answer, or does not re-run the pattern.
'use strict';

const TEXTS = [
  '', 'a', 'abc', 'ABC', 'aaa', 'aab', 'ANSWER: 42', 'answer: 42', 'x\ny', 'x\ry',
  'x\u2028y', 'x\u2029y', 'x\u0085y', 'end\n', 'end', 'a b', 'a\u00a0b', 'a\u3000b',
  'a\ufeffb', 'a\u180eb', '\u0663', '7', '\u00e9t\u00e9', 'caf\u00e9', '\u0130stanbul',
  '\u212a', '\ud83d\ude00', 'x\ud83d\ude00y', '{,3}', 'a{,3}', 'a{2}', 'aa', '(?i)abc',
  'ab\u0000c', 'tab\there', 'foo.bar', 'foo-bar', 'foo_bar', '\u00e9a', 'a\u00e9',
  '/path/', ']', '}', '-', 'x'.repeat(3) + 'b', 'word boundary', 'big-word', 'a1_b2',
];

const PATTERNS = [
  // the constructs the issue names
  '(?i)abc', '(?s)x.y', '(?x)a b c', '(?#comment)abc', '(?>a+)b', 'a{,3}', '^a{,3}$',
  'x.y', '^x.y$', '(?i:abc)', '(?m)^end$', '(?P<n>a)', '(?<n>a)', '(?<=a)b', '(?<!a)b',
  // anchors and line terminators
  '^end$', 'end$', '^$', '$', '^', 'x$', 'y$', 'd\\n$', '^x\\ny$',
  // the class escapes
  '\\d', '^\\d$', '\\D', '^\\D$', '\\w', '^\\w+$', '\\W', '\\s', 'a\\sb', 'a\\Sb',
  '[\\s]', '[^\\s]', '[\\d]', '[\\w-]', '\\bword\\b', '\\Bord', 'big\\b', '\\B-',
  // literals and escapes
  'abc', 'ABC', 'a.c', 'foo\\.bar', 'foo\\-bar', '\\x41', '\\u00e9', '\\u{e9}', '\\x4',
  '\\0', 'b\\0c', '\\01', '\\t', '\\v', '\\f', '\\cA', '\\e', '\\a', '\\z', '\\Z', '\\A',
  '\\/path\\/', '/path/', '\\k<n>', '\\p{L}', '\\P{L}', '\\1', '(a)\\1', '\\8',
  // classes
  '[abc]', '[^abc]', '[a-c]+', '[c-a]', '[]', '[^]', '[a-]', '[-a]', '[a\\-z]', '[\\]]',
  '[[]', '[^]]', ']', '}', '{', 'a{', 'a{2', '[\\b]', '[\\d-z]', '[a-\\d]', '[\\D]',
  '[\u00e9]', '[^\u00e9]', '[\\u00e9]',
  // quantifiers
  'a*', 'a+', 'a?', 'a{2}', 'a{2,}', 'a{1,2}', 'a{2,1}', 'a*?', 'a+?', 'a{2}?', 'a**',
  'a*+', 'a++', 'a?+', '*a', '+', '?', 'a{1001}', '(a+)+b', '(a*)*b', '(a|a)*b',
  '(a|b)*', '(ab)+', '(?:ab)*c', '(a)?b', '(?=a)*', '(?=a)', '(?!a)', '^(?=.*a)',
  // groups and alternation
  '(a)', '(?:a)', 'a|b', 'x|', '|', '()', '(?:)', 'a)', '(a', '(?', '(?:a|b)c',
  // beyond the basic plane, and case
  '\ud83d\ude00', '^.$', '^..$', '\ud83d\ude00+', '[\ud83d\ude00]', '.', '\u00e9',
  '\u0130', 'i', 'k', '[\\s\\S]', '\\S+',
];

const cases = [];
for (const pattern of PATTERNS) {
  let regex;
  try {
    regex = new RegExp(pattern);
  } catch (error) {
    cases.push({ pattern, text: null, js: 'SyntaxError' });
    continue;
  }
  for (const text of TEXTS) cases.push({ pattern, text, js: regex.test(text) });
}
process.stdout.write(
  JSON.stringify({ node: process.version, cases }, null, 0).replace(/\},\{/g, '},\n{') + '\n',
);
