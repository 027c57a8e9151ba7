/**
 * The voices the twin speaks: a few of Polly's published voices (DescribeVoices' Voice shape), with the engines
 * Polly documents for each among standard and neural (the twin makes neither long-form nor generative speech).
 */
export interface TwinVoice {
  Id: string;
  Name: string;
  Gender: 'Female' | 'Male';
  LanguageCode: string;
  LanguageName: string;
  AdditionalLanguageCodes?: string[];
  SupportedEngines: Array<'standard' | 'neural'>;
}

const voice = (
  Id: string,
  Gender: TwinVoice['Gender'],
  LanguageCode: string,
  LanguageName: string,
  SupportedEngines: TwinVoice['SupportedEngines'],
  Name = Id,
): TwinVoice => ({ Id, Name, Gender, LanguageCode, LanguageName, SupportedEngines });

export const TWIN_VOICES: readonly TwinVoice[] = [
  voice('Joanna', 'Female', 'en-US', 'US English', ['standard', 'neural']),
  voice('Matthew', 'Male', 'en-US', 'US English', ['standard', 'neural']),
  voice('Amy', 'Female', 'en-GB', 'British English', ['standard', 'neural']),
  voice('Brian', 'Male', 'en-GB', 'British English', ['standard', 'neural']),
  voice('Lucia', 'Female', 'es-ES', 'Castilian Spanish', ['standard', 'neural']),
  voice('Sergio', 'Male', 'es-ES', 'Castilian Spanish', ['neural']),
  voice('Vicki', 'Female', 'de-DE', 'German', ['standard', 'neural']),
  voice('Hans', 'Male', 'de-DE', 'German', ['standard']),
  voice('Celine', 'Female', 'fr-FR', 'French', ['standard'], 'Céline'),
  voice('Lea', 'Female', 'fr-FR', 'French', ['standard', 'neural'], 'Léa'),
  voice('Mathieu', 'Male', 'fr-FR', 'French', ['standard']),
  voice('Remi', 'Male', 'fr-FR', 'French', ['neural'], 'Rémi'),
];

export const findTwinVoice = (id: string) => TWIN_VOICES.find((candidate) => candidate.Id === id);
