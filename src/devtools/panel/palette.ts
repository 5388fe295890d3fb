/** The panel's colours (dark, readable on any app). */
export const palette = {
  background: '#15181e',
  text: '#e6e8eb',
  muted: '#8b939e',
  border: '#2c313a',
  selected: '#252b35',
  kinds: {
    append: '#7cc4ff',
    read: '#9be39b',
    turn: '#e7c86e',
    token: '#c9a7ff',
    wait: '#f0a35e',
    tab: '#7fd8d0',
    error: '#ff7b7b',
    status: '#8b939e',
  },
} as const;
