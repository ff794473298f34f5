// drizzle-kit configuration for the PostgreSQL engine: `bun run db:generate:pg --name <topic>` writes a new migration from schema.ts.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/pg/schema.ts',
  out: './src/store/pg/migrations',
})
