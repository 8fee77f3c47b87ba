import { catalogConsole } from './console';
import { startConsole } from '../shared/app';

startConsole(catalogConsole);
