import { Type } from '@sinclair/typebox';

/** The shared error body (plugins/errors.ts) and small bodies several catalog routes answer with. */
export const ErrorBody = Type.Object({
  detail: Type.Union([
    Type.String(),
    Type.Array(Type.Object({ loc: Type.Array(Type.Union([Type.String(), Type.Number()])), msg: Type.String(), type: Type.String() })),
  ]),
  code: Type.String(),
});

export const ErrorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  422: ErrorBody,
};

export const Message = Type.Object({ message: Type.String(), path: Type.String() });
