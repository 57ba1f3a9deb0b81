import { auditRoutes } from "./audit";
import { brandingRoutes } from "./branding";
import { clientRoutes } from "./clients";
import { featureRoutes } from "./features";
import { keyRoutes } from "./keys";
import type { AnyRoute } from "./route";
import { settingsRoutes } from "./settings";
import { textRoutes } from "./texts";
import { userLockoutRoutes } from "./user-lockout";
import { userRoutes } from "./users";

/** Every management route: the router serves exactly these, and the OpenAPI document lists exactly these. */
export const API_ROUTES: AnyRoute[] = [
  ...clientRoutes,
  ...userRoutes,
  ...userLockoutRoutes,
  ...featureRoutes,
  ...keyRoutes,
  ...settingsRoutes,
  ...brandingRoutes,
  ...auditRoutes,
  ...textRoutes,
];
