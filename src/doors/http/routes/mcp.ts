import type { App, AppContext } from '../context.js';

export function registerMcpRoutes(_app: App, _ctx: AppContext): void {
  // routes are added here
}
