import t from 'tap'
import bcrypt from 'bcrypt'
import { checkPassword, hashPassword, resolveCost, verifyNobody, verifyPassword, DEFAULT_BCRYPT_COST } from '../../../lib/auth/password.js'

process.env.TABLECRUD_BCRYPT_COST = '4'

t.test('a hash is bcrypt at the cost asked for, and verifies only its own password', async (t) => {
  const hash = await hashPassword('correct horse')
  t.match(hash, /^\$2b\$04\$[./A-Za-z0-9]{53}$/)
  t.equal(await verifyPassword('correct horse', hash), true)
  t.equal(await verifyPassword('correct horsE', hash), false)
  t.match(await hashPassword('correct horse', 5), /^\$2b\$05\$/)
  t.not(await hashPassword('correct horse'), hash, 'salted')
})

t.test('nothing past 72 bytes is lost: long passwords differing at the end do not match', async (t) => {
  const emoji = '😀'.repeat(127)
  const hash = await hashPassword(emoji + 'a')
  t.equal(Buffer.byteLength(emoji), 508)
  t.equal(await verifyPassword(emoji + 'a', hash), true)
  t.equal(await verifyPassword(emoji + 'b', hash), false, '128 emoji, the last one different')
  const ascii = 'x'.repeat(100)
  t.equal(await verifyPassword(ascii + '2', await hashPassword(ascii + '1')), false, '101 ASCII characters')
  // What plain bcrypt would do with the same input:
  t.equal(await bcrypt.compare(ascii + '2', await bcrypt.hash(ascii + '1', 4)), true, 'bcrypt alone would cut them')
  t.equal(await verifyPassword('abc\u0000def', await hashPassword('abc\u0000xyz')), false, 'nor anything after a NUL')
})

t.test('length: 6 to 128 characters, counted as code points', async (t) => {
  t.throws(() => checkPassword('12345'), { statusCode: 400, code: 'TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT', message: 'The password must have at least 6 characters.' })
  t.throws(() => checkPassword(''), { code: 'TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT' })
  t.throws(() => checkPassword('x'.repeat(129)), { statusCode: 400, code: 'TABLECRUD_ERR_AUTH_PASSWORD_TOO_LONG', message: 'The password must have at most 128 characters.' })
  t.throws(() => checkPassword('😀'.repeat(129)), { code: 'TABLECRUD_ERR_AUTH_PASSWORD_TOO_LONG' })
  t.doesNotThrow(() => checkPassword('123456'))
  t.doesNotThrow(() => checkPassword('😀'.repeat(6)))
  t.doesNotThrow(() => checkPassword('😀'.repeat(128)), '128 emoji are 256 UTF-16 units but 128 characters')
  await t.rejects(hashPassword('short'), { code: 'TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT' })
})

t.test('verifyPassword is false for anything that is not a hash of it', async (t) => {
  t.equal(await verifyPassword('correct horse', 'not a hash'), false)
  t.equal(await verifyPassword('correct horse', ''), false)
  t.equal(await verifyPassword('correct horse', null as unknown as string), false)
})

t.test('verifyNobody spends a bcrypt check and is always false', async (t) => {
  t.equal(await verifyNobody('anything at all'), false)
  t.equal(await verifyNobody('anything at all', 5), false)
  t.equal(await verifyNobody('again, with the cached dummy'), false)
})

t.test('the cost: given, else TABLECRUD_BCRYPT_COST, else 12', async (t) => {
  t.teardown(() => { process.env.TABLECRUD_BCRYPT_COST = '4' })
  t.equal(resolveCost(10), 10)
  t.equal(resolveCost(), 4)
  process.env.TABLECRUD_BCRYPT_COST = ''
  t.equal(resolveCost(), DEFAULT_BCRYPT_COST)
  delete process.env.TABLECRUD_BCRYPT_COST
  t.equal(resolveCost(), 12)
  for (const bad of ['3', '32', 'ten', '4.5', ' 5', '-4']) {
    process.env.TABLECRUD_BCRYPT_COST = bad
    t.throws(() => resolveCost(), { message: `TABLECRUD_BCRYPT_COST must be an integer from 4 to 31, not ${JSON.stringify(bad)}` }, bad)
  }
  for (const bad of [3, 32, 4.5, NaN]) t.throws(() => resolveCost(bad), { message: `bcryptCost must be an integer from 4 to 31, not ${bad}` })
})
