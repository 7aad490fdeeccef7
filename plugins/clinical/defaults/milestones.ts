// The default set of developmental milestones shipped with the app: what most children (about three in four) do by
// each age, by domain, after the public CDC "Learn the Signs. Act Early." checklists (2022 revision), reworded in
// plain language. POST /api/admin/milestones/seed loads it into clinical.milestones; the milestone narrative reads
// a child's age group from there.

/** The four domains, in the order the checklists and the list show them. */
export const MILESTONE_DOMAINS = ['social_emotional', 'language_communication', 'cognitive', 'movement_physical'] as const
export type MilestoneDomain = (typeof MILESTONE_DOMAINS)[number]

export const MILESTONE_DOMAIN_LABELS: Readonly<Record<MilestoneDomain, string>> = {
  social_emotional: 'Social/emotional',
  language_communication: 'Language/communication',
  cognitive: 'Cognitive (learning, thinking, problem-solving)',
  movement_physical: 'Movement/physical development',
}

/** The checklist ages: 2, 4, 6, 9, 12, 15 and 18 months; 2, 3, 4 and 5 years. */
export const MILESTONE_AGES_MONTHS = [2, 4, 6, 9, 12, 15, 18, 24, 36, 48, 60] as const
export type MilestoneAge = (typeof MILESTONE_AGES_MONTHS)[number]

/** An age as people say it: months up to 18, whole years from 2. */
export const milestoneAgeLabel = (ageMonths: number): string =>
  ageMonths < 24 ? `${ageMonths} months` : `${ageMonths / 12} years`

export type MilestoneChecklist = Readonly<Record<MilestoneDomain, readonly string[]>>

export const DEFAULT_MILESTONES: Readonly<Record<MilestoneAge, MilestoneChecklist>> = {
  2: {
    social_emotional: [
      'Settles when spoken to or picked up', 'Looks at a caregiver\'s face', 'Seems pleased when a parent comes near',
      'Smiles back when talked to or smiled at',
    ],
    language_communication: ['Makes sounds other than crying', 'Responds to loud noises'],
    cognitive: ['Follows a moving person with the eyes', 'Looks at a toy for a few seconds'],
    movement_physical: ['Lifts the head when lying on the tummy', 'Moves both arms and both legs', 'Opens the hands now and then'],
  },
  4: {
    social_emotional: [
      'Smiles unprompted to get attention', 'Chuckles when someone tries to make them laugh',
      'Looks, moves or makes sounds to catch or keep a caregiver\'s attention',
    ],
    language_communication: ['Coos ("ooo", "aah")', 'Makes sounds in reply when talked to', 'Turns the head toward a parent\'s voice'],
    cognitive: ['Opens the mouth at the sight of breast or bottle when hungry', 'Studies their own hands with interest'],
    movement_physical: [
      'Holds the head steady without support when held', 'Holds a toy placed in the hand', 'Swings an arm at toys',
      'Brings the hands to the mouth', 'Pushes up onto elbows or forearms when on the tummy',
    ],
  },
  6: {
    social_emotional: ['Recognises familiar people', 'Enjoys looking at themself in a mirror', 'Laughs'],
    language_communication: ['Takes turns making sounds with a caregiver', 'Blows raspberries', 'Squeals'],
    cognitive: ['Mouths objects to explore them', 'Reaches for a toy they want', 'Closes the lips to refuse more food'],
    movement_physical: [
      'Rolls from tummy to back', 'Pushes up on straight arms when on the tummy', 'Leans on the hands for support when sitting',
    ],
  },
  9: {
    social_emotional: [
      'Is shy, clingy or fearful with strangers', 'Shows several facial expressions (happy, sad, angry, surprised)',
      'Looks over when their name is called', 'Reacts when a parent leaves (looks, reaches or cries)', 'Smiles or laughs at peekaboo',
    ],
    language_communication: ['Babbles strings of sounds such as "mamama" and "bababa"', 'Raises the arms to be picked up'],
    cognitive: ['Looks for an object that drops out of sight', 'Bangs two objects together'],
    movement_physical: [
      'Gets into a sitting position without help', 'Passes objects from one hand to the other',
      'Rakes food toward themself with the fingers', 'Sits without support',
    ],
  },
  12: {
    social_emotional: ['Plays simple games such as pat-a-cake'],
    language_communication: [
      'Waves bye-bye', 'Calls a parent "mama", "dada" or another special name', 'Understands "no" (pauses or stops briefly)',
    ],
    cognitive: ['Puts an object into a container, such as a block into a cup', 'Finds a toy they watched being hidden'],
    movement_physical: [
      'Pulls up to standing', 'Walks while holding on to furniture', 'Drinks from an open cup an adult holds',
      'Picks up small items between thumb and pointer finger',
    ],
  },
  15: {
    social_emotional: [
      'Copies other children at play', 'Shows a caregiver an object they like', 'Claps when excited', 'Hugs a soft toy or doll',
      'Shows affection with hugs, cuddles or kisses',
    ],
    language_communication: [
      'Tries one or two words besides "mama" or "dada" (such as "ba" for ball)', 'Looks at a familiar object when it is named',
      'Follows a direction given with both words and a gesture', 'Points to ask for something or to get help',
    ],
    cognitive: ['Tries to use everyday things the right way (phone, cup, book)', 'Stacks at least two small objects, such as blocks'],
    movement_physical: ['Takes a few steps alone', 'Feeds themself some food with the fingers'],
  },
  18: {
    social_emotional: [
      'Moves away from a parent but checks that they are still close', 'Points to show something interesting',
      'Holds out the hands to have them washed', 'Looks at a few pages of a book with an adult',
      'Helps with dressing by pushing an arm through a sleeve or lifting a foot',
    ],
    language_communication: ['Tries three or more words besides "mama" or "dada"', 'Follows a one-step direction without a gesture'],
    cognitive: ['Copies household chores, such as sweeping', 'Plays with toys in simple ways, such as pushing a toy car'],
    movement_physical: [
      'Walks without holding on', 'Scribbles', 'Drinks from an open cup, sometimes spilling', 'Feeds themself with the fingers',
      'Tries to use a spoon', 'Climbs on and off a couch or chair without help',
    ],
  },
  24: {
    social_emotional: ['Notices when others are hurt or upset', 'Looks at a parent\'s face to see how to react to something new'],
    language_communication: [
      'Points to pictures in a book when asked ("Where is the bear?")', 'Puts at least two words together ("more milk")',
      'Points to at least two body parts when asked', 'Uses gestures beyond waving and pointing, such as blowing a kiss or nodding',
    ],
    cognitive: [
      'Holds something in one hand while using the other (such as taking a lid off a box)', 'Tries switches, knobs or buttons on a toy',
      'Plays with more than one toy at once, such as toy food on a toy plate',
    ],
    movement_physical: ['Kicks a ball', 'Runs', 'Walks up a few stairs, with or without help', 'Eats with a spoon'],
  },
  36: {
    social_emotional: [
      'Calms within about 10 minutes after a parent leaves (such as at childcare drop-off)', 'Notices other children and joins in their play',
    ],
    language_communication: [
      'Keeps up a conversation of at least two back-and-forth turns', 'Asks who, what, where or why questions',
      'Says what is happening in a picture or book when asked ("running", "eating")', 'Says their first name when asked',
      'Speaks clearly enough for others to understand most of the time',
    ],
    cognitive: ['Draws a circle after being shown how', 'Keeps away from hot things, such as a stove, when warned'],
    movement_physical: [
      'Threads items such as large beads or pasta onto a string', 'Puts on some clothes alone, such as loose trousers or a jacket',
      'Uses a fork',
    ],
  },
  48: {
    social_emotional: [
      'Pretends to be something else in play (teacher, superhero, dog)', 'Asks to play with other children when none are around',
      'Comforts others who are hurt or sad', 'Avoids danger, such as jumping from a great height',
      'Likes to be a helper', 'Adjusts behaviour to the place (library, playground, place of worship)',
    ],
    language_communication: [
      'Speaks in sentences of four or more words', 'Says some words of a song, story or nursery rhyme',
      'Tells about at least one thing that happened in their day', 'Answers simple questions such as "What is a coat for?"',
    ],
    cognitive: ['Names a few colours', 'Tells what comes next in a familiar story', 'Draws a person with three or more body parts'],
    movement_physical: [
      'Catches a large ball most of the time', 'Serves food or pours water with an adult watching', 'Undoes some buttons',
      'Holds a crayon or pencil between fingers and thumb, not in a fist',
    ],
  },
  60: {
    social_emotional: [
      'Follows rules or takes turns in games with other children', 'Sings, dances or acts for others',
      'Does simple chores, such as matching socks or clearing the table',
    ],
    language_communication: [
      'Tells a heard or made-up story with at least two events', 'Answers simple questions about a story just read or told',
      'Keeps a conversation going for more than three back-and-forth turns', 'Uses or recognises simple rhymes (bat and cat)',
    ],
    cognitive: [
      'Counts to 10', 'Names some numbers from 1 to 5 when pointed to', 'Uses time words such as yesterday, tomorrow, morning or night',
      'Pays attention for 5 to 10 minutes in an activity (screen time does not count)', 'Writes some letters of their name',
      'Names some letters when pointed to',
    ],
    movement_physical: ['Does up some buttons', 'Hops on one foot'],
  },
}
