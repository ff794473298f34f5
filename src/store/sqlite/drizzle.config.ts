// drizzle-kit configuration: `bun run db:generate` writes a new migration from schema.ts.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/store/sqlite/schema.ts',
  out: './src/store/sqlite/migrations',
})
