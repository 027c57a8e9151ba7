/**
 * The platform's background audio: short ambient loops shipped with the product, the same for every
 * workspace, made at install time with sox (the recipe of each is next to it). Their ids are not UUIDs,
 * so they never collide with a workspace's uploads.
 */
export interface PlatformBackgroundAudio {
  id: string;
  slug: string;
  label: string;
  /**
   * sox's effects after `sox -R -n -r 22050 -c 1 -C 48 OUT.mp3`: 10 to 15 seconds of shaped noise, faded in
   * and out a little so the loop's seam does not click. `-R` makes the noise repeatable: one recipe, one file.
   */
  effects: readonly string[];
}

/** `seconds` of the noise shaped by `effects`, faded in and out over 0.3 s. */
const loop = (seconds: number, noise: string, ...effects: string[]) => [
  'synth',
  String(seconds),
  noise,
  ...effects,
  'fade',
  'q',
  '0.3',
  String(seconds),
  '0.3',
];

export const PLATFORM_BACKGROUND_AUDIO: readonly PlatformBackgroundAudio[] = [
  {
    id: 'platform-office-hum',
    slug: 'office-hum',
    label: 'Office hum',
    // Brown noise with only its lows kept: ventilation and distant machines.
    effects: loop(12, 'brownnoise', 'lowpass', '400', 'vol', '0.6'),
  },
  {
    id: 'platform-soft-rain',
    slug: 'soft-rain',
    label: 'Soft rain',
    // Pink noise without its rumble and hiss, swelling slowly: rain on a window.
    effects: loop(10, 'pinknoise', 'highpass', '400', 'lowpass', '7000', 'tremolo', '0.2', '15', 'vol', '0.9'),
  },
  {
    id: 'platform-cafe-murmur',
    slug: 'cafe-murmur',
    label: 'Café murmur',
    // Noise in the band of voices, beating at syllable rate and slower: many people talking at once.
    effects: loop(
      15,
      'brownnoise',
      'bandpass',
      '550',
      '500h',
      'tremolo',
      '3.1',
      '50',
      'tremolo',
      '0.6',
      '40',
      'vol',
      '1.5',
    ),
  },
];

/** How every platform file is written: MP3, mono, 22,050 Hz, 48 kbit/s (6 KB a second). */
export const PLATFORM_AUDIO_OUTPUT = { args: ['-r', '22050', '-c', '1', '-C', '48'], extension: 'mp3' } as const;
export const PLATFORM_AUDIO_MEDIA_TYPE = 'audio/mpeg';

export const findPlatformBackgroundAudio = (id: string): PlatformBackgroundAudio | undefined =>
  PLATFORM_BACKGROUND_AUDIO.find((asset) => asset.id === id);
