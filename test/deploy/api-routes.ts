/**
 * The routes the chat serves publicly, from the list `app.ts` registers
 * (`server/http/api-routes.ts`), so the proxy configs (web.config, the nginx
 * files) are checked against what the server really serves.
 */
import { API_ROUTES } from '../../server/http/api-routes.ts';

export async function apiRoutes(): Promise<string[]> {
  return API_ROUTES.map((route) => route.path).sort();
}
