import { Type } from '@sinclair/typebox';

/** The shared error body (plugins/errors.ts) and small bodies several catalog routes answer with. */
export const ErrorBody = Type.Object({
  detail: Type.Union([
    Type.String(),
    Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Number()])),
        msg: Type.String(),
        type: Type.String(),
      }),
    ),
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

/** The answer of adding a server to groups or removing it from them (UI-family and internal routes alike). */
export const GroupsResult = Type.Object({
  message: Type.String(),
  path: Type.String(),
  server_name: Type.String(),
  groups: Type.Array(Type.String()),
  scopes_updated: Type.Array(Type.String(), {
    description: 'Scope documents (named after the groups) whose server_access changed',
  }),
});
