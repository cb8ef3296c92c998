/**
 * MCP resources as plain objects shaped like the wire types (resources/templates/list, resources/list,
 * resources/read): no SDK import, so the server registers them under either protocol revision.
 */
export interface ResourceTemplateEntry {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}
export interface ResourceEntry {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: string;
}
export interface ResourceContents {
  uri: string;
  mimeType: string;
  text: string;
}

export const JSON_MIME = 'application/json';
export const MARKDOWN_MIME = 'text/markdown';
