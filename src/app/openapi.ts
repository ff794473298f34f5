/**
 * The OpenAPI 3.1 document served at GET /api/v1/openapi.json, assembled
 * here because it describes both the API (http/) and the console (console/),
 * which never import each other. Each route file documents its own
 * operations beside its handler, from the TypeBox schemas and the message
 * catalogue, so the document cannot drift from what the server answers.
 *
 * Written for generated clients (openapi-typescript, openapi-fetch): one
 * server whose URL is the origin (the contract's {base_url} is that plus
 * /api/v1), a send body that is a `oneOf` discriminated by `channel`, one
 * named `ErrorResponse` under every error, 404 and 405 on every operation,
 * and an example on every response. The document describes the API; the
 * routes keep their own validation and its exact messages.
 */
import { accountOperations } from '../console/account-routes.ts'
import { actionOperations } from '../console/action-routes.ts'
import { keyOperations } from '../console/key-routes.ts'
import { CONSOLE_SECURITY_SCHEMES, CONSOLE_TAG, consoleSchemas } from '../console/openapi.ts'
import { readOperations } from '../console/read-routes.ts'
import { searchOperations } from '../console/search-openapi.ts'
import { sessionOperations } from '../console/session-routes.ts'
import { cancelOperation } from '../http/cancel-route.ts'
import { nextOperation } from '../http/next-route.ts'
import { API_HEADERS, API_INFO, API_PARAMETERS, API_RESPONSES, API_SECURITY_SCHEMES, API_SERVERS, API_TAGS, apiSchemas } from '../http/openapi-components.ts'
import { type Json, verificationIdParam } from '../http/openapi-parts.ts'
import { healthOperation, metricsOperation, openapiOperation, readyOperation } from '../http/ops-routes.ts'
import { receiptsHandshakeOperation, receiptsOperation } from '../http/receipts-route.ts'
import { sendOperation } from '../http/send-route.ts'
import { statusOperation } from '../http/status-route.ts'
import { verifyOperation } from '../http/verify-route.ts'

export function buildOpenApi(version: string): Json {
  return {
    openapi: '3.1.0',
    info: { ...API_INFO, version },
    servers: API_SERVERS,
    tags: [...API_TAGS, CONSOLE_TAG],
    paths: { ...apiPaths(), ...sessionOperations, ...keyOperations, ...accountOperations, ...actionOperations, ...searchOperations },
    components: {
      schemas: { ...apiSchemas(), ...consoleSchemas() },
      responses: API_RESPONSES,
      parameters: API_PARAMETERS,
      headers: API_HEADERS,
      securitySchemes: { ...API_SECURITY_SCHEMES, ...CONSOLE_SECURITY_SCHEMES },
    },
  }
}

function apiPaths(): Record<string, Json> {
  return {
    '/api/v1/send': { post: sendOperation },
    '/api/v1/verify': { post: verifyOperation },
    '/api/v1/verifications/{verification_id}': { parameters: [verificationIdParam], get: statusOperation },
    '/api/v1/verifications/{verification_id}/cancel': { parameters: [verificationIdParam], post: cancelOperation },
    '/api/v1/verifications/{verification_id}/next': { parameters: [verificationIdParam], post: nextOperation },
    '/api/v1/receipts/{provider}': { get: receiptsHandshakeOperation, post: receiptsOperation },
    '/healthz': { get: healthOperation },
    '/readyz': { get: readyOperation },
    '/metrics': { get: metricsOperation },
    '/api/v1/openapi.json': { get: openapiOperation },
  }
}

/** The paths of the console's read endpoints (console/read-routes.ts), for a document that describes them beside the API's. */
export function consoleReadPaths(): Record<string, Json> {
  return { ...readOperations }
}
