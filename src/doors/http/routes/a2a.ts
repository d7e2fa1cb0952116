import type { App, AppContext } from '../context.js';

export function registerA2aRoutes(_app: App, _ctx: AppContext): void {
  // routes are added here
}
