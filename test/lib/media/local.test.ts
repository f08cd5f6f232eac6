import t from 'tap'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { localMediaStorage, LocalMediaStorage } from '../../../lib/media/local.js'
import { createTables } from '../../../lib/db/index.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { testDatabase } from '../../helpers/db.js'

const film = defineTable('film', {
  title: column.varchar({ length: 100 }),
  poster: column.varchar({ length: 200, null: true }),
  stills: column.array(column.text()),
  year: column.integer({ null: true }),
  years: column.array(column.integer()),
  notes: column.text({ null: true }),
  grid: column.array(column.array(column.varchar({ length: 200 })))
})
const poster = film.columnMap.get('poster')!
const stills = film.columnMap.get('stills')!

async function tempDir (t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tc-f-media-'))
  t.teardown(async () => await rm(dir, { recursive: true, force: true }))
  return dir
}

/** Every file under a folder, as paths relative to it. */
async function tree (dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).sort()
}

t.test('the column must be a Varchar, Text, or an Array of them', async (t) => {
  const dir = await tempDir(t)
  for (const name of ['poster', 'stills', 'notes', 'grid']) {
    t.ok(localMediaStorage({ column: film.columnMap.get(name)!, mediaPath: dir }), name)
  }
  for (const name of ['year', 'years', 'id']) {
    t.throws(() => localMediaStorage({ column: film.columnMap.get(name)!, mediaPath: dir }),
      { code: 'TABLECRUD_ERR_MEDIA_COLUMN', message: 'The column must be a Varchar, Text, or Array.' }, name)
  }
  t.throws(() => localMediaStorage({ column: column.varchar({ length: 10 }) as never, mediaPath: dir }),
    { code: 'TABLECRUD_ERR_OPTIONS', message: /^localMediaStorage: the option column must be a column of a table made by defineTable/ })
})

t.test('options are checked', async (t) => {
  const dir = await tempDir(t)
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ mediaPath: '' }, /the option mediaPath must be a non-empty path/],
    [{ mediaPath: 3 }, /the option mediaPath must be a non-empty path/],
    [{ filePermissions: 0o1000 }, /the option filePermissions must be a file mode/],
    [{ filePermissions: 1.5 }, /the option filePermissions must be a file mode/],
    [{ filePermissions: -1 }, /the option filePermissions must be a file mode/],
    [{ rootUrl: 5 }, /the option rootUrl must be a string/],
    [{ allowedExtensions: [] }, /the option allowedExtensions must be a non-empty array/],
    [{ allowedExtensions: 'png' }, /the option allowedExtensions must be a non-empty array/],
    [{ allowedCharacters: [''] }, /the option allowedCharacters must be a non-empty array/]
  ]
  for (const [options, message] of cases) {
    t.throws(() => localMediaStorage({ column: poster, mediaPath: dir, ...options } as never), { code: 'TABLECRUD_ERR_OPTIONS', message }, JSON.stringify(options))
  }
  t.throws(() => localMediaStorage(null as never), { message: 'localMediaStorage: the option options must be an object' })
})

t.test('storeFile: a buffer or a stream, into a folder made when missing, mode 0600', async (t) => {
  const dir = join(await tempDir(t), 'deep', 'media')
  const storage = localMediaStorage({ column: poster, mediaPath: dir })
  t.type(storage, LocalMediaStorage)
  const a = await storage.storeFile('cat.png', Buffer.from('meow'))
  t.match(a, /^cat-[0-9a-f-]{36}\.png$/)
  const b = await storage.storeFile('/home/me/dog.txt', Readable.from(['wo', 'of']), { user: { id: 1 } })
  t.match(b, /^dog-[0-9a-f-]{36}\.txt$/)
  t.equal(await readFile(join(dir, a), 'utf8'), 'meow')
  t.equal(await readFile(join(dir, b), 'utf8'), 'woof')
  t.equal((await stat(join(dir, a))).mode & 0o777, 0o600)
  t.equal((await stat(join(dir, b))).mode & 0o777, 0o600)
  t.same(await storage.getFileKeys(), [a, b].sort())
  await t.rejects(storage.storeFile('x.png', 'text' as never), { name: 'TypeError' })
  const custom = localMediaStorage({ column: poster, mediaPath: dir, allowedExtensions: ['bin'], allowedCharacters: null })
  t.match(await custom.storeFile('café.bin', new Uint8Array([1, 2])), /^café-[0-9a-f-]{36}\.bin$/)
  await t.rejects(custom.storeFile('a.png', Buffer.from('x')), { message: "This file type isn't allowed." })
})

t.test('filePermissions is applied exactly, whatever the umask', async (t) => {
  const dir = await tempDir(t)
  const before = process.umask(0o077)
  t.teardown(() => { process.umask(before) })
  const storage = localMediaStorage({ column: poster, mediaPath: dir, filePermissions: 0o644 })
  const key = await storage.storeFile('a.png', Buffer.from('x'))
  t.equal((await stat(join(dir, key))).mode & 0o777, 0o644)
})

t.test('bad names are refused and nothing is written; paths never leave the folder', async (t) => {
  const root = await tempDir(t)
  const dir = join(root, 'media')
  const storage = localMediaStorage({ column: poster, mediaPath: dir })
  await t.rejects(storage.storeFile('../../etc/passwd', Buffer.from('x')), { code: 'TABLECRUD_ERR_MEDIA', statusCode: 400, message: 'The file has no extension.' })
  await t.rejects(storage.storeFile('a\0.png', Buffer.from('x')), { message: "'\0' is not allowed in the filename." })
  await t.rejects(storage.storeFile(`${'a'.repeat(300)}.png`, Buffer.from('x')), { message: 'The file name must not be longer than 255 characters.' })
  t.same(await tree(root), [])
  const key = await storage.storeFile('../../outside.png', Buffer.from('x'))
  t.same(await tree(root), ['media', `media/${key}`])
  // A key maker that strays is stopped before any file is opened.
  storage.generateFileKey = () => '../escape.png'
  await t.rejects(storage.storeFile('a.png', Buffer.from('x')), { code: 'TABLECRUD_ERR_MEDIA', message: 'The file key "../escape.png" is invalid.' })
  t.same(await tree(root), ['media', `media/${key}`])
})

t.test('an existing key is refused and the file kept', async (t) => {
  const dir = await tempDir(t)
  const storage = localMediaStorage({ column: poster, mediaPath: dir })
  storage.generateFileKey = () => 'same-key.png'
  t.equal(await storage.storeFile('a.png', Buffer.from('first')), 'same-key.png')
  await t.rejects(storage.storeFile('b.png', Readable.from(['second'])), { code: 'TABLECRUD_ERR_MEDIA_EXISTS', statusCode: 409, message: 'A file with the key same-key.png already exists.' })
  t.equal(await readFile(join(dir, 'same-key.png'), 'utf8'), 'first')
})

t.test('a file the system will not create: its error, the data not read, no file', async (t) => {
  const dir = await tempDir(t)
  // A folder whose path the system takes (under PATH_MAX, 4096 bytes), but not with a key after
  // it (ENAMETOOLONG): a key over 255 bytes, which did it before, is now refused by its check.
  const mediaPath = join(dir, ...Array.from({ length: Math.floor((4090 - dir.length) / 251) }, () => 'd'.repeat(250)), 'e'.repeat(Math.max(1, (4090 - dir.length) % 251 - 1)))
  const storage = localMediaStorage({ column: poster, mediaPath })
  storage.generateFileKey = () => `${'k'.repeat(60)}.png`
  const data = Readable.from([Buffer.from('x')])
  await t.rejects(storage.storeFile('a.png', data), { code: 'ENAMETOOLONG' })
  t.equal(data.destroyed, true)
  t.same(await readdir(mediaPath), [])
})

t.test('a stream that fails half-way leaves no file', async (t) => {
  const dir = await tempDir(t)
  const storage = localMediaStorage({ column: poster, mediaPath: dir })
  async function * broken (): AsyncGenerator<Buffer> {
    yield Buffer.alloc(1024, 1)
    throw new Error('connection lost')
  }
  await t.rejects(storage.storeFile('a.png', Readable.from(broken())), { message: 'connection lost' })
  t.same(await readdir(dir), [])
})

t.test('generateFileUrl: rootUrl without its trailing slash, then the key', async (t) => {
  const dir = await tempDir(t)
  const storage = localMediaStorage({ column: poster, mediaPath: dir })
  t.equal(await storage.generateFileUrl('cat-1.png'), '/media/cat-1.png')
  t.equal(await storage.generateFileUrl('cat-1.png', 'https://cdn.example.com/files/'), 'https://cdn.example.com/files/cat-1.png')
  t.equal(await storage.generateFileUrl('my cat (1)-2.png', '/m'), '/m/my%20cat%20(1)-2.png')
  const other = localMediaStorage({ column: poster, mediaPath: dir, rootUrl: '/uploads//' })
  t.equal(await other.generateFileUrl('a-1.png'), '/uploads/a-1.png')
  await t.rejects(storage.generateFileUrl('../secret.png'), { code: 'TABLECRUD_ERR_MEDIA' })
})

t.test('getFile streams a file; a missing one is a 404, a bad key a 400', async (t) => {
  const dir = await tempDir(t)
  const storage = localMediaStorage({ column: poster, mediaPath: dir })
  const key = await storage.storeFile('a.txt', Buffer.from('hello'))
  t.equal(await text(await storage.getFile(key)), 'hello')
  await t.rejects(storage.getFile('gone-1.txt'), { code: 'TABLECRUD_ERR_MEDIA_NOT_FOUND', statusCode: 404, message: 'No file has the key "gone-1.txt".' })
  await t.rejects(storage.getFile('../../etc/passwd'), { code: 'TABLECRUD_ERR_MEDIA', statusCode: 400 })
  await mkdir(join(dir, 'sub.png'))
  await t.rejects(storage.getFile('sub.png'), { code: 'TABLECRUD_ERR_MEDIA_NOT_FOUND' }, 'a folder is no file')
  await rm(dir, { recursive: true })
  await writeFile(dir, '')
  await t.rejects(storage.getFile('a-1.txt'), { code: 'ENOTDIR' }, 'other errors pass through')
})

t.test('deleteFile, bulkDeleteFiles and getFileKeys', async (t) => {
  const root = await tempDir(t)
  const dir = join(root, 'media')
  const storage = localMediaStorage({ column: poster, mediaPath: dir })
  t.same(await storage.getFileKeys(), [], 'no folder yet: no keys')
  const keys = [await storage.storeFile('a.png', Buffer.from('a')), await storage.storeFile('b.png', Buffer.from('b')), await storage.storeFile('c.png', Buffer.from('c'))]
  await writeFile(join(dir, '.gitkeep'), '')
  await mkdir(join(dir, 'folder'))
  t.same(await storage.getFileKeys(), [...keys].sort(), 'dot files and folders are not keys')
  await storage.deleteFile(keys[0]!)
  await storage.deleteFile(keys[0]!)
  await t.rejects(storage.bulkDeleteFiles([keys[1]!, '../x.png']), { code: 'TABLECRUD_ERR_MEDIA' })
  t.same(await storage.getFileKeys(), [keys[1], keys[2]].sort(), 'a bad key in the list deletes nothing')
  await t.rejects(storage.bulkDeleteFiles('a.png' as never), { name: 'TypeError' })
  await storage.bulkDeleteFiles([keys[1]!, keys[2]!])
  t.same(await storage.getFileKeys(), [])
  t.same((await readdir(dir)).sort(), ['.gitkeep', 'folder'])
  await writeFile(join(root, 'file'), '')
  await t.rejects(localMediaStorage({ column: poster, mediaPath: join(root, 'file') }).getFileKeys(), { code: 'ENOTDIR' })
})

t.test('unused files: the folder against the column, Array columns unnested', async (t) => {
  const db = await testDatabase(t)
  await createTables(db.pool, [film])
  const dir = await tempDir(t)
  const posters = localMediaStorage({ column: poster, mediaPath: join(dir, 'posters') })
  const gallery = localMediaStorage({ column: stills, mediaPath: join(dir, 'stills') })
  const used = await posters.storeFile('used.png', Buffer.from('1'))
  const unused = await posters.storeFile('unused.png', Buffer.from('2'))
  const s1 = await gallery.storeFile('s1.jpg', Buffer.from('3'))
  const s2 = await gallery.storeFile('s2.jpg', Buffer.from('4'))
  const s3 = await gallery.storeFile('s3.jpg', Buffer.from('5'))
  await db.pool.query('INSERT INTO film (title, poster, stills, years, grid) VALUES ($1, $2, $3, $4, $5), ($6, $7, $8, $4, $5), ($9, NULL, $10, $4, $5)',
    ['A', used, [s1], [], [], 'B', used, [s1, s2, null], 'C', []])
  t.same(await posters.getFileKeysFromDb(db.pool), [used])
  t.same(await gallery.getFileKeysFromDb(db.pool), [s1, s2].sort())
  t.same(await posters.getUnusedFileKeys(db.pool), [unused])
  t.same(await gallery.getUnusedFileKeys(db.pool), [s3])
  t.same(await posters.deleteUnusedFiles(db.pool), [unused])
  t.same(await gallery.deleteUnusedFiles(db.pool), [s3])
  t.same(await posters.getFileKeys(), [used])
  t.same(await gallery.getFileKeys(), [s1, s2].sort())
  t.same(await gallery.deleteUnusedFiles(db.pool), [], 'nothing more to delete')
})
