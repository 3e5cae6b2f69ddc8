import { toLegacyHTTPError } from '@a2a-js/sdk/compat/v0_3/server';
import { A2A_ERROR_CODE, RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';
import type { Response } from 'express';
import { REST_PATH } from './agent-card.js';

/** An error in the REST shape of the version: v1.0 google.rpc.Status, v0.3 the JSON-RPC error object. */
export function refuse(res: Response, legacy: boolean, status: number, message: string): void {
  const error =
    status === 400 || status === 413 || status === 415
      ? new RequestMalformedError(message)
      : new Error(message);
  res.status(status).json(legacy ? toLegacyHTTPError(error) : toRestErrorBody(error, status));
}

/**
 * A path no route serves, answered with where the routes of each version are. In v0.3's shape the
 * code is MethodNotFound, which is what a missing route is (the SDK's mapping would say Internal).
 */
export function noSuchEndpoint(res: Response, legacy: boolean): void {
  if (legacy) {
    res.status(404).json({ code: A2A_ERROR_CODE.METHOD_NOT_FOUND, message: NO_SUCH_ENDPOINT.legacy });
    return;
  }
  refuse(res, false, 404, NO_SUCH_ENDPOINT.current);
}

const NO_SUCH_ENDPOINT = {
  current:
    `No such REST endpoint. v1.0 routes (send A2A-Version: 1.0): POST ${REST_PATH}/message:send, ` +
    `GET ${REST_PATH}/tasks, GET ${REST_PATH}/tasks/{id}; v0.3 routes are under ${REST_PATH}/v1; ` +
    'the agent card lists every interface',
  legacy:
    `No such v0.3 REST endpoint. v0.3 routes (no A2A-Version header): POST ${REST_PATH}/v1/message:send, ` +
    `GET ${REST_PATH}/v1/tasks, GET ${REST_PATH}/v1/tasks/{id}; v1.0 routes are under ${REST_PATH} with A2A-Version: 1.0`,
};
