import type { App, AppContext } from '../context.js';

export function registerBadgeRoutes(_app: App, _ctx: AppContext): void {
  // routes are added here
}
