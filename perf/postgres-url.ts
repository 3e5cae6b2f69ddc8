/** The PostgreSQL the probes seed a schema of their own in: the tests' database (docs/contributing.md). */
export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
