import { caRoutes } from './ca';
import { otpRoutes, revokeOtp } from './otp';
import { roleRoutes } from './roles';
import { signRoutes } from './sign';
import { zeroAddressRoutes } from './zero-address';
import { EngineType } from '../../core/types';

/** The SSH secrets engine (`ssh` by default): OpenSSH certificates (ca roles) and one-time passwords (otp roles). */
export const sshEngine: EngineType = {
  type: 'ssh',
  kind: 'secret',
  description: 'one-time passwords and SSH certificates',
  routes: [...roleRoutes, ...zeroAddressRoutes, ...caRoutes, ...signRoutes, ...otpRoutes],
  revoke: revokeOtp,
};
