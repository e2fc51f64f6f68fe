/**
 * TEMPORARY: the refresh-family part of the store, as the store branch
 * (`refresh-store`) defines it in `store/types.ts`; removed at its merge.
 */
export interface RefreshFamily {
  familyId: string;
  userId: string;
  tenantId: string;
  scope: string;
  sessionVersion: number;
  membershipGeneration: number;
  createdAt: number;
  absoluteExpiresAt: number;
  currentDigest: string;
  currentExpiresAt: number;
  previous?: { digest: string; usedAt: number; successorDigest: string };
  accessTokens: Record<string, number>;
  revoked: boolean;
}

export type RotateResult =
  | { outcome: 'rotated'; family: RefreshFamily }
  | { outcome: 'grace'; family: RefreshFamily }
  | { outcome: 'reused'; family: RefreshFamily }
  | { outcome: 'invalid' };

export interface RotateRefreshToken {
  familyId: string;
  presentedDigest: string;
  successorDigest: string;
  jti: string;
  accessExpiresAt: number;
  now: number;
  graceSeconds: number;
  idleTtlSeconds: number;
}

export interface RefreshFamilies {
  createRefreshFamily(family: RefreshFamily, maxPerUser: number): Promise<RefreshFamily[]>;
  rotateRefreshToken(request: RotateRefreshToken): Promise<RotateResult>;
  getRefreshFamily(familyId: string): Promise<RefreshFamily | null>;
  revokeRefreshFamily(familyId: string): Promise<RefreshFamily | null>;
  revokeRefreshFamiliesOf(userId: string, tenantId?: string): Promise<unknown>;
}
