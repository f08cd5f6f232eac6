import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { S3Client } from '@aws-sdk/client-s3'
import S3rver from 's3rver'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface TestS3 {
  client: S3Client
  endpoint: string
  bucket: string
}

/**
 * A real S3 server (s3rver) on a free loopback port, storing in a temporary folder, with one
 * bucket; stopped and removed at the end of the test.
 */
export async function testS3 (t: Teardown, bucket = 'media'): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'tc-f-s3-'))
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: bucket }] })
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
  })
  t.teardown(async () => {
    client.destroy()
    await server.close()
    await rm(directory, { recursive: true, force: true })
  })
  return { client, endpoint, bucket }
}
