// What promptfoo's own rules answer for `is-json` (JSON.parse succeeds) and `levenshtein`
// (fastest-levenshtein's distance, the package promptfoo 0.123.1 calls) on tricky inputs.
// Run with Node (20 or later) where fastest-levenshtein resolves (promptfoo's install):
//   NODE_PATH=<promptfoo install>/node_modules node tests/data/promptfoo/assertion_cases.js \
//     > tests/data/promptfoo/assertion_cases.json
'use strict';
const { distance } = require('fastest-levenshtein');

const JSON_TEXTS = [
  '', ' ', '1', ' 1 ', '1\n', '\t[1]\r\n', '\u00a01', '\ufeff1', '[1,]', '01', '-0', '1.e5',
  '.5', '1e', '1e400', '-1e400', '"\t"', '"\\t"', '{"a":1,"a":2}', '"\\ud800"', 'tru', 'nul',
  'NaN', 'Infinity', '-Infinity', '"\\u00"', '"\\x41"', '[]', '{}', 'null', 'true', 'false',
  '1'.repeat(5000), '[' + '1,'.repeat(10) + '1]', '{"a": [1, {"b": null}]}', "{'a': 1}",
  '[1] [2]', '"a" ', '\u2028 1', '1 // c', '"\u2028"', '"\u0000"', '1_000', '0x10', '+1',
];

const PAIRS = [
  ['', ''], ['a', ''], ['', 'abc'], ['kitten', 'sitting'], ['The answer is 4', 'The answer is 5'],
  ['The answer is 4', 'the answer'], ['\u{1F600}', 'a'], ['\u{1F600}', '\u{1F601}'],
  ['caf\u00e9', 'cafe\u0301'], ['x'.repeat(40) + '\u{1F600}', 'y'.repeat(39)],
  ['abc'.repeat(30), 'abd'.repeat(30)], ['a'.repeat(70), 'b'.repeat(3) + 'a'.repeat(70)],
];

const isJson = JSON_TEXTS.map((text) => {
  try {
    JSON.parse(text);
    return { text, js: true };
  } catch {
    return { text, js: false };
  }
});
const levenshtein = PAIRS.map(([a, b]) => ({ a, b, js: distance(a, b) }));
process.stdout.write(JSON.stringify({ node: process.version, isJson, levenshtein }, null, 1) + '\n');
