/**
 * Holds the database's write lock from another process, as an operator's
 * script or a second tool might: `bun hold-lock.ts DB MS` opens the file,
 * BEGIN IMMEDIATE, writes a row over with itself, prints "locked", waits MS,
 * rolls back and prints "released".
 */
import { Database } from 'bun:sqlite'

const [path, ms] = [process.argv[2]!, Number(process.argv[3])]
const db = new Database(path)
db.run('PRAGMA busy_timeout = 5000')
db.run('BEGIN IMMEDIATE')
db.run('UPDATE accounts SET balance = balance')
console.log('locked')
await Bun.sleep(ms)
db.run('ROLLBACK')
db.close()
console.log('released')
