import t from 'tap'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { buffer, text } from 'node:stream/consumers'
import { setTimeout as sleep } from 'node:timers/promises'
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3'
import { PART_SIZE, s3MediaStorage, S3MediaStorage } from '../../../lib/media/s3.js'
import { createTables } from '../../../lib/db/index.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { testDatabase } from '../../helpers/db.js'
import { testS3 } from '../../helpers/s3.js'

const album = defineTable('album', {
  cover: column.text({ null: true }),
  pages: column.array(column.varchar({ length: 200 })),
  year: column.integer({ null: true })
})
const cover = album.columnMap.get('cover')!
const pages = album.columnMap.get('pages')!

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'

/** The object keys of a bucket, as S3 lists them. */
async function objects (s3: Awaited<ReturnType<typeof testS3>>): Promise<string[]> {
  const page = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))
  return (page.Contents ?? []).map((o) => o.Key!).sort()
}

/** `size` bytes of a repeating pattern, streamed in 64 KiB chunks, never held whole. */
function pattern (size: number): Readable {
  const chunk = Buffer.alloc(64 * 1024)
  for (let i = 0; i < chunk.length; i++) chunk[i] = i % 251
  return Readable.from((function * () {
    for (let sent = 0; sent < size; sent += chunk.length) yield chunk.subarray(0, Math.min(chunk.length, size - sent))
  })())
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex')

t.test('the SDK is imported on first use only: it is an optional peer dependency', async (t) => {
  const source = await readFile(new URL('../../../lib/media/s3.ts', import.meta.url), 'utf8')
  t.notMatch(source, /^import [^\n]*'@aws-sdk/m)
  t.match(source, /import\('@aws-sdk\/client-s3'\)/)
})

t.test('options are checked', async (t) => {
  const s3 = await testS3(t)
  const base = { column: cover, bucket: s3.bucket, client: s3.client }
  t.type(s3MediaStorage(base), S3MediaStorage)
  t.throws(() => s3MediaStorage({ ...base, column: album.columnMap.get('year')! }), { code: 'TABLECRUD_ERR_MEDIA_COLUMN', message: 'The column must be a Varchar, Text, or Array.' })
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ bucket: '' }, /s3MediaStorage: the option bucket must be a non-empty string/],
    [{ folder: '/' }, /the option folder must be a non-empty string/],
    [{ folder: 3 }, /the option folder must be a non-empty string/],
    [{ client: {} }, /the option client must be an S3Client/],
    [{ client: undefined }, /the option client must be an S3Client/],
    [{ signUrls: 'yes' }, /the option signUrls must be a boolean/],
    [{ signedUrlExpiry: 0 }, /the option signedUrlExpiry must be an integer from 1 to 604800/],
    [{ signedUrlExpiry: 604801 }, /the option signedUrlExpiry must be an integer from 1 to 604800/],
    [{ uploadMetadata: [] }, /the option uploadMetadata must be an object/],
    [{ uploadMetadata: 'public' }, /the option uploadMetadata must be an object/]
  ]
  for (const [options, message] of cases) {
    t.throws(() => s3MediaStorage({ ...base, ...options } as never), { code: 'TABLECRUD_ERR_OPTIONS', message }, JSON.stringify(options))
  }
})

t.test('a small file: one PutObject, ContentType from the extension, uploadMetadata, folder prefix', async (t) => {
  const s3 = await testS3(t)
  const storage = s3MediaStorage({
    column: cover,
    bucket: s3.bucket,
    client: s3.client,
    folder: '/covers/',
    uploadMetadata: { CacheControl: 'max-age=60', Metadata: { origin: 'test' } }
  })
  t.equal(storage.folder, 'covers')
  const key = await storage.storeFile('../My Cover.PNG', Buffer.from('png bytes'))
  t.match(key, new RegExp(`^My Cover-${UUID}\\.PNG$`))
  t.same(await objects(s3), [`covers/${key}`])
  const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `covers/${key}` }))
  t.equal(head.ContentType, 'image/png')
  t.equal(head.CacheControl, 'max-age=60')
  t.same(head.Metadata, { origin: 'test' })
  t.equal(await text(await storage.getFile(key)), 'png bytes')
  const csv = await storage.storeFile('data.csv', Readable.from(['a,b\n', '1,2\n']))
  t.equal((await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `covers/${csv}` }))).ContentType, 'text/csv')
  t.same(await storage.getFileKeys(), [csv, key].sort())
  await t.rejects(storage.storeFile('a.exe', Buffer.from('x')), { code: 'TABLECRUD_ERR_MEDIA', message: "This file type isn't allowed." })
  await t.rejects(storage.getFile('gone-1.png'), { code: 'TABLECRUD_ERR_MEDIA_NOT_FOUND', statusCode: 404 })
  await t.rejects(storage.getFile('../x.png'), { code: 'TABLECRUD_ERR_MEDIA', statusCode: 400 })
})

t.test('a large stream goes up as a multipart upload, one part in memory at a time', async (t) => {
  const s3 = await testS3(t)
  // The real client, its commands counted on the way.
  const sent: string[] = []
  const client = { send: async (command: object) => { sent.push(command.constructor.name); return await s3.client.send(command as never) } }
  const storage = s3MediaStorage({ column: cover, bucket: s3.bucket, client })
  const size = 2 * PART_SIZE + 12345
  const key = await storage.storeFile('film.mp4', pattern(size))
  const back = await buffer(await storage.getFile(key))
  t.equal(back.length, size)
  t.equal(sha256(back), sha256(await buffer(pattern(size))))
  const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }))
  t.equal(head.ContentType, 'video/mp4')
  t.same(sent.slice(0, 5), ['CreateMultipartUploadCommand', 'UploadPartCommand', 'UploadPartCommand', 'UploadPartCommand', 'CompleteMultipartUploadCommand'])
  // Exactly one part's worth: a multipart upload of one part; less: one PutObject.
  sent.length = 0
  const exact = await storage.storeFile('exact.mp4', pattern(PART_SIZE))
  t.equal((await buffer(await storage.getFile(exact))).length, PART_SIZE)
  await storage.storeFile('less.mp4', pattern(PART_SIZE - 1))
  t.same(sent, ['CreateMultipartUploadCommand', 'UploadPartCommand', 'CompleteMultipartUploadCommand', 'GetObjectCommand', 'PutObjectCommand'])
})

t.test('a stream that fails leaves no object, before or after the first part', async (t) => {
  const s3 = await testS3(t)
  const storage = s3MediaStorage({ column: cover, bucket: s3.bucket, client: s3.client })
  for (const before of [1024, PART_SIZE + 1024]) {
    async function * broken (): AsyncGenerator<Buffer> {
      yield * pattern(before)
      throw new Error('connection lost')
    }
    await t.rejects(storage.storeFile('a.mp4', Readable.from(broken())), { message: 'connection lost' })
  }
  t.same(await objects(s3), [])
  await t.rejects(storage.storeFile('x.png', 42 as never), { name: 'TypeError' })
})

t.test('presigned URLs return the bytes over HTTP until they expire; plain URLs when asked', async (t) => {
  const s3 = await testS3(t)
  const storage = s3MediaStorage({ column: cover, bucket: s3.bucket, client: s3.client, folder: 'f' })
  const key = await storage.storeFile('hello.txt', Buffer.from('hello, world'))
  const url = await storage.generateFileUrl(key)
  t.match(url, new RegExp(`^${s3.endpoint}/${s3.bucket}/f/hello-${UUID}\\.txt\\?.*X-Amz-Expires=3600`))
  const ok = await fetch(url)
  t.equal(ok.status, 200)
  t.equal(await ok.text(), 'hello, world')
  t.equal(ok.headers.get('content-type'), 'text/plain')

  const brief = s3MediaStorage({ column: cover, bucket: s3.bucket, client: s3.client, folder: 'f', signedUrlExpiry: 1 })
  const short = await brief.generateFileUrl(key)
  t.match(short, /X-Amz-Expires=1(&|$)/)
  await sleep(2000)
  const expired = await fetch(short)
  t.equal(expired.status, 403)
  t.notMatch(await expired.text(), 'hello, world')

  const plain = s3MediaStorage({ column: cover, bucket: s3.bucket, client: s3.client, folder: 'f', signUrls: false })
  t.equal(await plain.generateFileUrl(key, '/ignored'), `${s3.endpoint}/${s3.bucket}/f/${encodeURIComponent(key)}`)
  await t.rejects(plain.generateFileUrl('../../x.png'), { code: 'TABLECRUD_ERR_MEDIA' })
})

t.test('delete, bulk delete and listing stay inside the folder', async (t) => {
  const s3 = await testS3(t)
  const storage = s3MediaStorage({ column: cover, bucket: s3.bucket, client: s3.client, folder: 'mine' })
  const root = s3MediaStorage({ column: cover, bucket: s3.bucket, client: s3.client })
  await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'other/theirs.png', Body: 'x' }))
  await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'mine/deeper/theirs.png', Body: 'x' }))
  const keys = await Promise.all(['a.png', 'b.png', 'c.png'].map(async (n) => await storage.storeFile(n, Buffer.from(n))))
  t.same(await storage.getFileKeys(), [...keys].sort())
  t.same(await root.getFileKeys(), [], 'objects in folders are not keys at the root')
  await storage.deleteFile(keys[0]!)
  await storage.deleteFile(keys[0]!)
  await t.rejects(storage.bulkDeleteFiles([keys[1]!, 'x/y.png']), { code: 'TABLECRUD_ERR_MEDIA' })
  t.same(await storage.getFileKeys(), [keys[1], keys[2]].sort(), 'a bad key in the list deletes nothing')
  await storage.bulkDeleteFiles([keys[1]!, keys[2]!])
  await storage.bulkDeleteFiles([])
  t.same(await storage.getFileKeys(), [])
  t.same(await objects(s3), ['mine/deeper/theirs.png', 'other/theirs.png'])
})

t.test('listing pages through more than one answer', async (t) => {
  const s3 = await testS3(t)
  const storage = s3MediaStorage({ column: cover, bucket: s3.bucket, client: s3.client })
  const keys = Array.from({ length: 1005 }, (_, i) => `f${String(i).padStart(4, '0')}-1.txt`)
  for (let i = 0; i < keys.length; i += 50) {
    await Promise.all(keys.slice(i, i + 50).map(async (Key) => await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body: 'x' }))))
  }
  t.same(await storage.getFileKeys(), keys)
})

t.test('a key S3 fails to delete is an error naming it', async (t) => {
  const s3 = await testS3(t)
  // The real client, with DeleteObjects answering a per-key failure as S3 does for a denied key.
  const client = {
    send: async (command: { constructor: { name: string } }) => command.constructor.name === 'DeleteObjectsCommand'
      ? { Errors: [{ Key: 'a-1.png', Code: 'AccessDenied', Message: 'Access Denied' }] }
      : await s3.client.send(command as never)
  }
  const storage = s3MediaStorage({ column: cover, bucket: s3.bucket, client })
  await t.rejects(storage.bulkDeleteFiles(['a-1.png']), { message: 'S3 did not delete a-1.png (Access Denied)' })
})

t.test('a write S3 answers with a 5xx is a 503 (the store is down); a 4xx is left as it is', async (t) => {
  const failing = (status: number, name: string): S3MediaStorage => s3MediaStorage({
    column: cover,
    bucket: 'media',
    client: { send: async () => { throw Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } }) } }
  })
  const down = failing(503, 'SlowDown')
  await t.rejects(down.storeFile('a.png', Buffer.from('x')), { statusCode: 503, code: 'TABLECRUD_ERR_MEDIA_UNAVAILABLE', cause: { name: 'SlowDown' } })
  await t.rejects(failing(403, 'AccessDenied').storeFile('a.png', Buffer.from('x')), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } })
})

t.test('unused files: the bucket against the column, Array columns unnested', async (t) => {
  const db = await testDatabase(t)
  await createTables(db.pool, [album])
  const s3 = await testS3(t)
  const covers = s3MediaStorage({ column: cover, bucket: s3.bucket, client: s3.client, folder: 'covers' })
  const scans = s3MediaStorage({ column: pages, bucket: s3.bucket, client: s3.client, folder: 'pages' })
  const used = await covers.storeFile('used.png', Buffer.from('1'))
  const unused = await covers.storeFile('unused.png', Buffer.from('2'))
  const p1 = await scans.storeFile('p1.pdf', Buffer.from('3'))
  const p2 = await scans.storeFile('p2.pdf', Buffer.from('4'))
  await db.pool.query('INSERT INTO album (cover, pages) VALUES ($1, $2), (NULL, $3)', [used, [p1], [p1, null]])
  t.same(await covers.getUnusedFileKeys(db.pool), [unused])
  t.same(await scans.getUnusedFileKeys(db.pool), [p2])
  t.same(await covers.deleteUnusedFiles(db.pool), [unused])
  t.same(await scans.deleteUnusedFiles(db.pool), [p2])
  t.same(await objects(s3), [`covers/${used}`, `pages/${p1}`])
})
