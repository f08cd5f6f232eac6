import t from 'tap'
import {
  formatInterval, formatTime, formatTimestamp, formatTimestamptz, nowTime, nowTimestamp, nowTimestamptz, parseBigInt,
  parseBoolean, parseDate, parseInteger, parseInterval, parseNumeric, parseReal, parseSmallInt, parseTime,
  parseTimestamp, parseTimestamptz, parseUuid, today
} from '../../lib/values/index.js'

t.test('parseInteger', async (t) => {
  const cases: Array<[string, number | undefined]> = [
    ['0', 0],
    ['42', 42],
    ['+42', 42],
    ['-42', -42],
    ['007', 7],
    ['2147483647', 2147483647],
    ['-2147483648', -2147483648],
    ['2147483648', undefined],
    ['-2147483649', undefined],
    ['99999999999999999999', undefined],
    ['', undefined],
    ['+', undefined],
    ['-', undefined],
    [' 1', undefined],
    ['1 ', undefined],
    ['1.0', undefined],
    ['1e3', undefined],
    ['0x10', undefined],
    ['1_000', undefined],
    ['١', undefined],
    ['NaN', undefined],
    ['Infinity', undefined],
    ['12abc', undefined],
    ['--1', undefined]
  ]
  for (const [text, expected] of cases) t.equal(parseInteger(text), expected, JSON.stringify(text))
  t.ok(Object.is(parseInteger('-0'), -0), '-0 is kept as JS reads it')
})

t.test('parseReal', async (t) => {
  const cases: Array<[string, number | undefined]> = [
    ['0', 0],
    ['1.5', 1.5],
    ['-0.25', -0.25],
    ['+3', 3],
    ['.5', 0.5],
    ['5.', 5],
    ['1e3', 1000],
    ['1E-2', 0.01],
    ['+.5e1', 5],
    ['2147483648', 2147483648],
    ['1e308', 1e308],
    ['1e309', undefined],
    ['-1e309', undefined],
    ['', undefined],
    ['.', undefined],
    ['e5', undefined],
    ['1e', undefined],
    [' 1', undefined],
    ['1 ', undefined],
    ['1,5', undefined],
    ['0x1', undefined],
    ['NaN', undefined],
    ['Infinity', undefined],
    ['-Infinity', undefined],
    ['1.2.3', undefined]
  ]
  for (const [text, expected] of cases) t.equal(parseReal(text), expected, JSON.stringify(text))
})

t.test('parseBoolean: every spelling, any case', async (t) => {
  const cases: Array<[string, boolean | undefined]> = [
    ['true', true], ['TRUE', true], ['True', true], ['t', true], ['T', true], ['yes', true], ['YES', true], ['Yes', true], ['1', true],
    ['false', false], ['FALSE', false], ['False', false], ['f', false], ['F', false], ['no', false], ['NO', false], ['No', false], ['0', false],
    ['', undefined], ['y', undefined], ['n', undefined], ['on', undefined], ['off', undefined], [' true', undefined],
    ['true ', undefined], ['2', undefined], ['01', undefined], ['tru', undefined], ['null', undefined]
  ]
  for (const [text, expected] of cases) t.equal(parseBoolean(text), expected, JSON.stringify(text))
})

t.test('parseNumeric', async (t) => {
  const cases: Array<[unknown, number, number, string | undefined]> = [
    // numbers
    [12.5, 5, 2, '12.50'],
    [0, 5, 2, '0.00'],
    [-0, 5, 2, '0.00'],
    [-12.5, 5, 2, '-12.50'],
    [123.45, 5, 2, '123.45'],
    [0.1, 5, 2, '0.10'],
    [0.1 + 0.2, 5, 2, undefined],
    [1234.5, 5, 2, undefined],
    [1e-7, 10, 7, '0.0000001'],
    [-1e-7, 10, 7, '-0.0000001'],
    [1e-7, 10, 6, undefined],
    [1.5e-22, 30, 25, '0.0000000000000000000001500'],
    [1.5e-22, 30, 2, undefined],
    [1.2345678901234566e-7, 30, 23, '0.00000012345678901234566'],
    [1.2345678901234566e-7, 30, 22, undefined],
    [1e21, 30, 0, '1000000000000000000000'],
    [1.5e21, 30, 2, '1500000000000000000000.00'],
    [1e21, 21, 0, undefined],
    [1e21, 22, 0, '1000000000000000000000'],
    [-2.5e25, 30, 0, '-25000000000000000000000000'],
    [NaN, 5, 2, undefined],
    [Infinity, 5, 2, undefined],
    [-Infinity, 5, 2, undefined],
    // strings
    ['12.5', 5, 2, '12.50'],
    ['12.50', 5, 2, '12.50'],
    ['1.230', 5, 2, '1.23'],
    ['1.2300000000', 5, 2, '1.23'],
    ['1.234', 5, 2, undefined],
    ['999.99', 5, 2, '999.99'],
    ['1000', 5, 2, undefined],
    ['007.5', 5, 2, '7.50'],
    ['000', 5, 2, '0.00'],
    ['-0', 5, 2, '0.00'],
    ['-0.00', 5, 2, '0.00'],
    ['+1', 5, 2, '1.00'],
    ['-1', 5, 2, '-1.00'],
    ['.5', 5, 2, '0.50'],
    ['5.', 5, 2, '5.00'],
    [' 12.5 ', 5, 2, '12.50'],
    ['\t-3\n', 5, 2, '-3.00'],
    ['1 2', 5, 2, undefined],
    ['1. 5', 5, 2, undefined],
    ['- 1', 5, 2, undefined],
    ['', 5, 2, undefined],
    ['   ', 5, 2, undefined],
    ['.', 5, 2, undefined],
    ['+', 5, 2, undefined],
    ['1e3', 10, 2, undefined],
    ['NaN', 5, 2, undefined],
    ['Infinity', 5, 2, undefined],
    ['0x10', 5, 2, undefined],
    ['1,5', 5, 2, undefined],
    ['12', 2, 0, '12'],
    ['12.0', 2, 0, '12'],
    ['12.5', 2, 0, undefined],
    ['100', 2, 0, undefined],
    ['0.99', 2, 2, '0.99'],
    ['-0.99', 2, 2, '-0.99'],
    ['1.00', 2, 2, undefined],
    ['9999999999.99', 12, 2, '9999999999.99'],
    ['10000000000', 12, 2, undefined],
    ['-9999999999.99', 12, 2, '-9999999999.99'],
    ['12345678901234567890.123456789', 30, 9, '12345678901234567890.123456789'],
    // neither
    [true, 5, 2, undefined],
    [null, 5, 2, undefined],
    [undefined, 5, 2, undefined],
    [['1'], 5, 2, undefined],
    [{}, 5, 2, undefined]
  ]
  for (const [value, precision, scale, expected] of cases) {
    t.equal(parseNumeric(value, precision, scale), expected, `${typeof value} ${String(value)} as numeric(${precision}, ${scale})`)
  }
})

t.test('parseTimestamp', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ['2024-01-02', '2024-01-02 00:00:00.000000'],
    ['2024-01-02T03:04:05', '2024-01-02 03:04:05.000000'],
    ['2024-01-02 03:04:05', '2024-01-02 03:04:05.000000'],
    ['2024-01-02T03:04', '2024-01-02 03:04:00.000000'],
    ['2024-01-02T03:04:05.5', '2024-01-02 03:04:05.500000'],
    ['2024-01-02T03:04:05,25', '2024-01-02 03:04:05.250000'],
    ['2024-01-02T03:04:05.123456', '2024-01-02 03:04:05.123456'],
    ['2024-01-02T03:04:05.1234567', '2024-01-02 03:04:05.123456'],
    ['2024-01-02T03:04:05.999999999', '2024-01-02 03:04:05.999999'],
    ['2024-01-02T03:04:05Z', '2024-01-02 03:04:05.000000'],
    ['2024-01-02T03:04Z', '2024-01-02 03:04:00.000000'],
    ['2024-01-02T03:04:05.5Z', '2024-01-02 03:04:05.500000'],
    ['2024-01-02T03:04:05+02:00', '2024-01-02 01:04:05.000000'],
    ['2024-01-02T03:04:05+0200', '2024-01-02 01:04:05.000000'],
    ['2024-01-02T03:04:05+02', '2024-01-02 01:04:05.000000'],
    ['2024-01-02T03:04:05-0530', '2024-01-02 08:34:05.000000'],
    ['2024-01-02T03:04:05-05:30', '2024-01-02 08:34:05.000000'],
    ['2024-01-01T01:00:00+02:00', '2023-12-31 23:00:00.000000'],
    ['2024-12-31T23:30:00-01:00', '2025-01-01 00:30:00.000000'],
    ['2024-01-02T03:04:05+23:59', '2024-01-01 03:05:05.000000'],
    ['2024-01-02T03:04:05+24:00', undefined],
    ['2024-01-02T03:04:05+02:60', undefined],
    ['2024-01-02T03:04:05+2', undefined],
    ['2024-01-02T03:04:05 Z', undefined],
    ['2024-02-29', '2024-02-29 00:00:00.000000'],
    ['2023-02-29', undefined],
    ['2000-02-29T12:00:00Z', '2000-02-29 12:00:00.000000'],
    ['1900-02-29', undefined],
    ['2024-06-30', '2024-06-30 00:00:00.000000'],
    ['2024-06-31', undefined],
    ['2024-12-31T23:59:59.999999', '2024-12-31 23:59:59.999999'],
    ['2024-02-31', undefined],
    ['2024-04-31', undefined],
    ['2024-13-01', undefined],
    ['2024-00-10', undefined],
    ['2024-01-00', undefined],
    ['2024-01-32', undefined],
    ['2024-01-02T24:00:00', undefined],
    ['2024-01-02T23:60:00', undefined],
    ['2024-01-02T23:59:60', undefined],
    ['0099-06-15', '0099-06-15 00:00:00.000000'],
    ['0001-01-01', '0001-01-01 00:00:00.000000'],
    ['0000-01-01', undefined],
    ['0000-02-29T00:00:00Z', undefined],
    ['0000-12-31T23:30:00-01:00', '0001-01-01 00:30:00.000000'],
    ['0000-02-30T23:30:00-01:00', undefined],
    ['0001-01-01T00:30:00+01:00', undefined],
    ['9999-12-31T23:59:59', '9999-12-31 23:59:59.000000'],
    ['9999-12-31T23:59:59-01:00', undefined],
    ['2024-01-02T03:04:05.', undefined],
    ['2024-1-2', undefined],
    ['24-01-02', undefined],
    ['20240102', undefined],
    ['2024-01-02t03:04:05', undefined],
    ['2024-01-02T3:04:05', undefined],
    ['2024-01-02Z', undefined],
    [' 2024-01-02', undefined],
    ['2024-01-02 ', undefined],
    ['now', undefined],
    ['', undefined]
  ]
  for (const [text, expected] of cases) t.equal(parseTimestamp(text), expected, JSON.stringify(text))
})

t.test('formatTimestamp', async (t) => {
  const cases: Array<[string, string]> = [
    ['2024-01-02 03:04:05', '2024-01-02T03:04:05'],
    ['2024-01-02 03:04:05.5', '2024-01-02T03:04:05.500000'],
    ['2024-01-02 03:04:05.05', '2024-01-02T03:04:05.050000'],
    ['2024-01-02 03:04:05.123456', '2024-01-02T03:04:05.123456'],
    ['2024-01-02 03:04:05.000001', '2024-01-02T03:04:05.000001'],
    ['0099-06-15 00:00:00', '0099-06-15T00:00:00'],
    ['infinity', 'infinity'],
    ['-infinity', '-infinity'],
    ['0044-03-15 12:00:00 BC', '0044-03-15 12:00:00 BC'],
    ['0044-03-15 12:00:00.5 BC', '0044-03-15 12:00:00.5 BC'],
    ['10000-01-01 00:00:00', '10000-01-01 00:00:00']
  ]
  for (const [text, expected] of cases) t.equal(formatTimestamp(text), expected, JSON.stringify(text))
})

t.test('parseTimestamp then formatTimestamp is the wire form', async (t) => {
  t.equal(formatTimestamp(parseTimestamp('2024-01-02T03:04:05.5+01:00')!.replace(/\.?0+$/, '')), '2024-01-02T02:04:05.500000')
})

t.test('nowTimestamp: the current UTC time, to the second, without zone', async (t) => {
  const before = Math.floor(Date.now() / 1000) * 1000
  const now = nowTimestamp()
  const after = Date.now()
  t.match(now, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/)
  const at = Date.parse(now + 'Z')
  t.ok(at >= before && at <= after, `${now} is now`)
})

t.test('parseSmallInt: 16-bit integers only', async (t) => {
  const cases: Array<[string, number | undefined]> = [
    ['0', 0], ['-32768', -32768], ['32767', 32767], ['+7', 7],
    ['32768', undefined], ['-32769', undefined], ['1.5', undefined], ['', undefined], ['x', undefined]
  ]
  for (const [text, want] of cases) t.equal(parseSmallInt(text), want, JSON.stringify(text))
})

t.test('parseBigInt: digit strings within 64 bits, exact; JSON numbers only while safe', async (t) => {
  const cases: Array<[unknown, string | undefined]> = [
    ['0', '0'], ['+12', '12'], ['-0', '0'], ['007', '7'],
    ['9223372036854775807', '9223372036854775807'], ['-9223372036854775808', '-9223372036854775808'],
    ['9223372036854775808', undefined], ['-9223372036854775809', undefined],
    ['9007199254740993', '9007199254740993'],
    [12, '12'], [-12, '-12'], [Number.MAX_SAFE_INTEGER, '9007199254740991'],
    [2 ** 53, undefined], [1.5, undefined], [Infinity, undefined],
    ['1.0', undefined], ['1e3', undefined], [' 1', undefined], ['', undefined], [true, undefined], [null, undefined]
  ]
  for (const [value, want] of cases) t.equal(parseBigInt(value), want, String(value))
})

t.test('parseDate: YYYY-MM-DD on the calendar', async (t) => {
  const cases: Array<[unknown, string | undefined]> = [
    ['2024-02-29', '2024-02-29'], ['0001-01-01', '0001-01-01'], ['9999-12-31', '9999-12-31'],
    ['2023-02-29', undefined], ['2024-13-01', undefined], ['0000-01-01', undefined], ['2024-1-01', undefined],
    ['2024-01-01T00:00:00', undefined], ['20240101', undefined], [20240101, undefined]
  ]
  for (const [value, want] of cases) t.equal(parseDate(value), want, String(value))
})

t.test('parseTime and formatTime: HH:MM:SS, the fraction padded to six digits when not zero', async (t) => {
  const cases: Array<[unknown, string | undefined]> = [
    ['00:00:00', '00:00:00'], ['23:59:59', '23:59:59'], ['04:05:06.5', '04:05:06.500000'],
    ['04:05:06.000', '04:05:06'], ['04:05:06.123456', '04:05:06.123456'],
    ['24:00:00', undefined], ['12:60:00', undefined], ['12:00:60', undefined], ['12:00', undefined],
    ['4:05:06', undefined], ['04:05:06.1234567', undefined], ['04:05:06Z', undefined], [400, undefined]
  ]
  for (const [value, want] of cases) t.equal(parseTime(value), want, String(value))
  t.equal(formatTime('04:05:06'), '04:05:06')
  t.equal(formatTime('04:05:06.5'), '04:05:06.500000')
  t.equal(formatTime('24:00:00'), '24:00:00', "PostgreSQL's end of day passes as it is")
  t.equal(formatTime('allballs'), 'allballs', 'text that is no time passes as it is')
  t.match(nowTime(), /^\d\d:\d\d:\d\d$/)
})

t.test('parseTimestamptz: a zone is required; the result is UTC text', async (t) => {
  const cases: Array<[unknown, string | undefined]> = [
    ['2024-01-02T03:04:05Z', '2024-01-02 03:04:05.000000+00'],
    ['2024-01-02t03:04:05.5z', '2024-01-02 03:04:05.500000+00'],
    ['2024-01-02T08:34:05.123456+05:30', '2024-01-02 03:04:05.123456+00'],
    ['2024-01-01T23:00:00-0200', '2024-01-02 01:00:00.000000+00'],
    ['2024-01-02 03:04+01', '2024-01-02 02:04:00.000000+00'],
    ['2024-01-02T03:04:05', undefined], ['2024-01-02', undefined], ['2024-01-02Z', undefined],
    ['2024-02-30T00:00:00Z', undefined], ['2024-01-02T03:04:05+24:00', undefined], [0, undefined]
  ]
  for (const [value, want] of cases) t.equal(parseTimestamptz(value), want, String(value))
})

t.test('formatTimestamptz: any session zone to UTC, microseconds kept', async (t) => {
  const cases: Array<[string, string]> = [
    ['2024-01-02 03:04:05+00', '2024-01-02T03:04:05Z'],
    ['2024-01-02 03:04:05.5+00', '2024-01-02T03:04:05.500000Z'],
    ['2024-01-02 08:34:05.123456+05:30', '2024-01-02T03:04:05.123456Z'],
    ['2024-01-01 22:04:05.000001-05', '2024-01-02T03:04:05.000001Z'],
    ['1900-01-01 00:00:00+00:09:21', '1899-12-31T23:50:39Z'],
    ['0001-01-01 00:30:00+01', '0001-01-01 00:30:00+01'],
    ['infinity', 'infinity'],
    ['2024-01-02 03:04:05+00 BC', '2024-01-02 03:04:05+00 BC']
  ]
  for (const [text, want] of cases) t.equal(formatTimestamptz(text), want, text)
  t.match(nowTimestamptz(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  t.match(today(), /^\d{4}-\d\d-\d\d$/)
})

t.test('parseInterval: ISO 8601 durations within PostgreSQL\'s range', async (t) => {
  const cases: Array<[unknown, string | undefined]> = [
    ['P1DT2H', 'P1DT2H'], ['PT0S', 'PT0S'], ['P1Y2M3W4DT5H6M7.5S', 'P1Y2M3W4DT5H6M7.5S'], ['PT1,5S', 'PT1.5S'],
    ['P-1DT2H', 'P-1DT2H'], ['P999999Y', 'P999999Y'],
    ['P', undefined], ['PT', undefined], ['P1DT', undefined], ['1 day', undefined], ['P1.5D', undefined],
    ['p1d', undefined], ['P1000000Y', undefined], ['PT1.1234567S', undefined], [1, undefined]
  ]
  for (const [value, want] of cases) t.equal(parseInterval(value), want, String(value))
})

t.test("formatInterval: PostgreSQL's default style to ISO 8601, as its iso_8601 style writes it", async (t) => {
  const cases: Array<[string, string]> = [
    ['00:00:00', 'PT0S'],
    ['1 day 02:00:00', 'P1DT2H'],
    ['-1 days +02:00:00', 'P-1DT2H'],
    ['1 year 2 mons -3 days +04:05:06.789', 'P1Y2M-3DT4H5M6.789S'],
    ['-00:01:30.5', 'PT-1M-30.5S'],
    ['-00:00:00.5', 'PT-0.5S'],
    ['10 mons 21 days', 'P10M21D'],
    ['-1 years -2 mons', 'P-1Y-2M'],
    ['100:00:00.100000', 'PT100H0.1S'],
    ['P1D', 'P1D'],
    ['', '']
  ]
  for (const [text, want] of cases) t.equal(formatInterval(text), want, text)
})

t.test('parseUuid: the 8-4-4-4-12 form in any case, lower case out', async (t) => {
  t.equal(parseUuid('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')
  for (const bad of ['a0eebc999c0b4ef8bb6d6bb9bd380a11', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', 'urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '', 7]) {
    t.equal(parseUuid(bad), undefined, String(bad))
  }
})
