import cors from 'cors';
import { corsPolicy } from '../contract/constants';

/** Browser callers may reach the ingest endpoints; preflight needs no credentials. Keys stay server-side secrets. */
export const ingestCors = cors({
  origin: '*',
  credentials: false,
  methods: corsPolicy.methods,
  allowedHeaders: corsPolicy.allowedHeaders,
  exposedHeaders: corsPolicy.exposedHeaders,
  maxAge: corsPolicy.maxAgeSeconds,
});
