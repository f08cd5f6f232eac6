import t from 'tap'
import { baseName, checkFileName, checkKey, contentTypeOf, DEFAULT_CHARACTERS, DEFAULT_EXTENSIONS, fileKey, MAX_NAME_LENGTH, nameRules } from '../../../lib/media/names.js'

const rules = nameRules(undefined, undefined)
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'

/** The message a name is refused with, or null when it passes. */
function refusal (name: string, r = rules): string | null {
  try {
    checkFileName(name, r)
    return null
  } catch (error) {
    t.equal((error as { code: string }).code, 'TABLECRUD_ERR_MEDIA')
    t.equal((error as { statusCode: number }).statusCode, 400)
    return (error as Error).message
  }
}

t.test('the defaults are SPEC §5.8 lists', async (t) => {
  t.same([...DEFAULT_EXTENSIONS], ['mp3', 'wav', 'csv', 'tsv', 'pdf', 'gif', 'jpeg', 'jpg', 'png', 'svg', 'tif', 'webp', 'rtf', 'txt', 'mov', 'mp4', 'webm'])
  t.equal(DEFAULT_CHARACTERS.join(''), 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.()')
})

t.test('each rule, with its message', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['', "The file name can't be empty."],
    ['.hidden.png', 'File names must not start with a period.'],
    ['a..png', "File names must not contain '..'."],
    ['a b.png', null],
    ['a$b.png', "'$' is not allowed in the filename."],
    ['a\0b.png', "'\0' is not allowed in the filename."],
    ['café.png', "'é' is not allowed in the filename."],
    ['a.exe', "This file type isn't allowed."],
    ['a.', "This file type isn't allowed."],
    ['readme', 'The file has no extension.'],
    ['Photo (1)_final-v2.PNG', null],
    ['x.JpEg', null]
  ]
  for (const [name, message] of cases) t.equal(refusal(name), message, JSON.stringify(name))
})

t.test('the rules apply in order: the first broken one is reported', async (t) => {
  // Each name breaks its own rule and every later one.
  t.equal(refusal('.a..$'), 'File names must not start with a period.')
  t.equal(refusal('a..$'), "File names must not contain '..'.")
  t.equal(refusal('a$.exe'), "'$' is not allowed in the filename.")
  t.equal(refusal('$'), "'$' is not allowed in the filename.")
  t.equal(refusal('a.exe'), "This file type isn't allowed.")
  t.equal(refusal(`${'a'.repeat(300)}.exe`), "This file type isn't allowed.")
  t.equal(refusal('a'.repeat(300)), 'The file has no extension.')
  t.equal(refusal(`${'a'.repeat(300)}.png`), `The file name must not be longer than ${MAX_NAME_LENGTH} characters.`)
  t.equal(refusal(`${'a'.repeat(251)}.png`), null)
})

t.test('a path is reduced to its base name first', async (t) => {
  t.equal(baseName('../../etc/passwd'), 'passwd')
  t.equal(baseName('C:\\Users\\me\\cat.png'), 'cat.png')
  t.equal(checkFileName('/tmp/x/cat.png', rules), 'cat.png')
  t.equal(checkFileName('..\\..\\cat.png', rules), 'cat.png')
  t.equal(refusal('../../etc/passwd'), 'The file has no extension.')
  t.equal(refusal('photos/'), "The file name can't be empty.")
  t.equal(refusal('photos/.env'), 'File names must not start with a period.')
})

t.test('options: other extensions and characters, or none', async (t) => {
  const custom = nameRules(['.EXE', 'bin'], [...'abcexinpgBIN.'])
  t.equal(refusal('abc.exe', custom), null)
  t.equal(refusal('abc.BIN', custom), null)
  t.equal(refusal('abc.png', custom), "This file type isn't allowed.")
  t.equal(refusal('abd.exe', custom), "'d' is not allowed in the filename.")
  t.equal(refusal('abc.EXE', custom), "'E' is not allowed in the filename.")
  const open = nameRules(null, null)
  t.equal(refusal('café €.anything', open), null)
  t.equal(refusal('a\u0007.png', open), "'\u0007' is not allowed in the filename.")
  t.equal(refusal('a.', open), 'The file has no extension.')
  t.equal(refusal('a', open), 'The file has no extension.')
  // A key is a file's name, and file systems hold 255 bytes of UTF-8: a name whose key would be
  // longer is refused, not stored into an ENAMETOOLONG (a 500). The UUID and its '-' are 37 bytes.
  const tooLong = 'The file name is too long to be stored: its key would be over 255 bytes.'
  t.equal(refusal(`Alien (1979).${'名'.repeat(120)}`, open), tooLong)
  // The name part is cut to 50 emoji, 200 bytes: 200 + 37 + '.' + 17 is 255.
  t.equal(refusal(`${'😀'.repeat(60)}.${'e'.repeat(17)}`, open), null, 'a key of 255 bytes')
  t.equal(refusal(`${'😀'.repeat(60)}.${'e'.repeat(18)}`, open), tooLong, 'a key of 256 bytes')
  t.equal(refusal(`a.${'e'.repeat(216)}`, open), null, 'a key of 255 bytes, the extension long')
  t.equal(refusal(`a.${'e'.repeat(217)}`, open), tooLong, 'a key of 256 bytes, the extension long')
})

t.test('keys: the name, cut to 50 when the whole name is longer than 50, a uuid v4, the extension', async (t) => {
  t.match(fileKey('cat.png'), new RegExp(`^cat-${UUID}\\.png$`))
  t.match(fileKey('Photo (1).JPG'), new RegExp(`^Photo \\(1\\)-${UUID}\\.JPG$`))
  t.not(fileKey('cat.png'), fileKey('cat.png'))
  // 50 characters in all: kept whole.
  const fifty = `${'a'.repeat(46)}.png`
  t.match(fileKey(fifty), new RegExp(`^${'a'.repeat(46)}-${UUID}\\.png$`))
  // 51 characters in all, 47 before the extension: nothing to cut.
  t.match(fileKey(`${'b'.repeat(47)}.png`), new RegExp(`^${'b'.repeat(47)}-${UUID}\\.png$`))
  // Long: the name part is cut to 50.
  t.match(fileKey(`${'c'.repeat(200)}.webm`), new RegExp(`^${'c'.repeat(50)}-${UUID}\\.webm$`))
  // Code points are counted, and never split.
  t.match(fileKey(`${'😀'.repeat(60)}.png`), new RegExp(`^${'😀'.repeat(50)}-${UUID}\\.png$`, 'u'))
  t.match(fileKey('a.b.png'), new RegExp(`^a\\.b-${UUID}\\.png$`))
})

t.test('keys coming back from clients must be plain names', async (t) => {
  t.equal(checkKey('cat-1.png'), 'cat-1.png')
  t.equal(checkKey('名'.repeat(85)), '名'.repeat(85), '255 bytes')
  // 86 characters, but 258 bytes: no file system holds the name.
  for (const bad of ['', '.env', 'a/../b', '../x', 'a/b', 'a\\b', 'a\0b', 'x'.repeat(256), '名'.repeat(86), 7 as unknown as string]) {
    t.throws(() => checkKey(bad), { code: 'TABLECRUD_ERR_MEDIA', statusCode: 400, message: `The file key ${JSON.stringify(bad)} is invalid.` }, JSON.stringify(bad))
  }
})

t.test('content types by extension, any case', async (t) => {
  t.equal(contentTypeOf('a-1.png'), 'image/png')
  t.equal(contentTypeOf('a-1.JPG'), 'image/jpeg')
  t.equal(contentTypeOf('a-1.svg'), 'image/svg+xml')
  t.equal(contentTypeOf('a-1.mp4'), 'video/mp4')
  t.equal(contentTypeOf('a-1.xyz'), 'application/octet-stream')
  for (const ext of DEFAULT_EXTENSIONS) t.not(contentTypeOf(`a.${ext}`), 'application/octet-stream', ext)
})
