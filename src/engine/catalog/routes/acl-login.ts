import { catalogRoute } from '../route';

export const aclLoginRoutes: ReturnType<typeof catalogRoute>[] = [];
