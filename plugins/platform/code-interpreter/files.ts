import { basename } from 'node:path';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { badRequest, notFound } from '../../../core/errors.ts';
import { FILENAME_PATTERN, FileInfo, type CodeInterpreterProvider } from '../../../core/primitives/code-interpreter.ts';
import { requireCapability } from '../capability.ts';
import { existingSession } from './sessions.ts';

const tags = ['code_interpreter'];
const MAX_FILE_BYTES = 10 * 1024 * 1024;
const filenameOk = new RegExp(FILENAME_PATTERN);

/** Session files: multipart upload (field `file`) and raw download. Multipart parsing is scoped to this plugin. */
const files: FastifyPluginAsyncTypebox = async (app) => {
  // preservePath: the name as sent, so a name with a folder in it is refused rather than cut to its last part.
  await app.register(multipart, { limits: { fileSize: MAX_FILE_BYTES, files: 1 }, preservePath: true });
  const providerFor = (headers: Record<string, string | string[] | undefined>) =>
    app.sb.providers.resolve<CodeInterpreterProvider>('code_interpreter', headers);

  app.post(
    '/sessions/:session_id/files',
    {
      schema: {
        tags,
        summary: `Upload a file into the session (multipart/form-data, field 'file', up to ${MAX_FILE_BYTES} bytes)`,
        consumes: ['multipart/form-data'],
        params: Type.Object({ session_id: Type.String({ minLength: 1 }) }),
        response: { 201: FileInfo },
      },
    },
    async (request, reply) => {
      const p = providerFor(request.headers);
      const { session_id } = request.params;
      await existingSession(request, p, session_id);
      requireCapability(p, 'files', 'file upload');
      if (!request.isMultipart())
        throw badRequest('SB_ERR_CODE_UPLOAD_INVALID', "Send the file as multipart/form-data in a field named 'file'");
      const part = await request.file();
      if (part?.fieldname !== 'file')
        throw badRequest('SB_ERR_CODE_UPLOAD_INVALID', "The multipart body has no field named 'file'");
      const given = part.filename ?? '';
      // A path in the name is refused, not quietly cut to its last part: the caller meant another place.
      const filename = basename(given);
      if (filename !== given || !filenameOk.test(filename)) {
        throw badRequest(
          'SB_ERR_CODE_UPLOAD_INVALID',
          `File name '${given}' is not allowed: use 1-255 letters, digits, spaces, '.', '_' or '-', and no folders`,
        );
      }
      const data = await part.toBuffer();
      return reply.code(201).send(await p.uploadFile(session_id, filename, data));
    },
  );

  app.get(
    '/sessions/:session_id/files/:filename',
    {
      schema: {
        tags,
        summary: 'Download a session file',
        params: Type.Object({
          session_id: Type.String({ minLength: 1 }),
          filename: Type.String({ pattern: FILENAME_PATTERN }),
        }),
        produces: ['application/octet-stream'],
        response: { 200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) },
      },
    },
    async (request, reply) => {
      const p = providerFor(request.headers);
      const { session_id, filename } = request.params;
      await existingSession(request, p, session_id);
      requireCapability(p, 'files', 'file download');
      const data = await p.downloadFile(session_id, filename);
      if (!data)
        throw notFound('SB_ERR_CODE_FILE_NOT_FOUND', `File '${filename}' not found in session '${session_id}'`);
      return reply
        .type('application/octet-stream')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .send(data);
    },
  );
};

export default files;
