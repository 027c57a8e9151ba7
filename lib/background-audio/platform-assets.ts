/**
 * The platform's background audio: short ambient loops shipped with the product, the same for every
 * workspace, made at install time with sox (the recipe of each is next to it). Their ids are not UUIDs,
 * so they never collide with a workspace's uploads.
 */
export interface PlatformBackgroundAudio {
  id: string;
  slug: string;
  label: string;
}

export const PLATFORM_BACKGROUND_AUDIO: readonly PlatformBackgroundAudio[] = [
  { id: 'platform-office-hum', slug: 'office-hum', label: 'Office hum' },
  { id: 'platform-soft-rain', slug: 'soft-rain', label: 'Soft rain' },
  { id: 'platform-cafe-murmur', slug: 'cafe-murmur', label: 'Café murmur' },
];

export const findPlatformBackgroundAudio = (id: string): PlatformBackgroundAudio | undefined =>
  PLATFORM_BACKGROUND_AUDIO.find((asset) => asset.id === id);
