import { csvDocument, csvField } from './csv';

test('plain fields pass unchanged; separators, quotes and line breaks are quoted', () => {
  expect(csvField('abc')).toBe('abc');
  expect(csvField('-50250')).toBe('-50250');
  expect(csvField('a,b')).toBe('"a,b"');
  expect(csvField('say "hi"')).toBe('"say ""hi"""');
  expect(csvField('two\nlines')).toBe('"two\nlines"');
});

test('a field a spreadsheet would run as a formula is defused', () => {
  expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
  expect(csvField('@cmd')).toBe("'@cmd");
  expect(csvField('-1+2')).toBe("'-1+2");
});

test('a document is a header and rows, each ending in CRLF', () => {
  expect(csvDocument(['a', 'b'], [['1', 'x,y']])).toBe('a,b\r\n1,"x,y"\r\n');
  expect(csvDocument(['a'], [])).toBe('a\r\n');
});
