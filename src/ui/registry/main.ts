import { registryConsole } from './console';
import { startConsole } from '../shared/app';

startConsole(registryConsole);
