import { route } from '../../http/routes';
import { RegistryActor, RegistryPermission } from '../access';

/** Declares a registry route; the schemas type the handler's input. */
export const registryRoute = route<RegistryActor, RegistryPermission>();
