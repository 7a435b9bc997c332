"""`stories[:SIZE[:SEED]]`: the embedded corpus, a seeded generator of simple children's stories.

Every story has a cast (a child, a friend, a parent, a pet, a toy, a place...) drawn from word
CATEGORIES, an arc (lost toy, new friend, rainy day, sharing, trip, fear, birthday, ...) made of
beats, and a few filler sentences. A slot draws uniformly from its category, so every word of a
category appears in the same sentence frames as the others: that shared context is what lets a
language model's embeddings cluster names with names and colours with colours, which the
embedding analyses then check (`category_of`, meta["categories"]).

The vocabulary is deliberately wide (inflected verbs, plurals, adjectives, comparatives, days,
months...) so a byte-level BPE trained on a few MB of it reaches 4,096 tokens: BPE never merges
across words, so the vocabulary it can reach is bounded by the distinct word forms it sees.

Speed is the other constraint (a 100 MB corpus must not take minutes): templates are compiled
once into `str.format_map` strings plus the list of slots they draw fresh per sentence, and a
story is one join. All text is ASCII, so len(text) is its UTF-8 size.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Iterator

from lrngpt.corpora import Corpus, parse_size
from lrngpt.errors import UserError

GENERATOR_VERSION = 1  # bump when the text a (size, seed) produces changes
DEFAULT_SIZE = 5_000_000


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


GIRLS = _words("""Lily Mia Luna Emma Sara Anna Zoe Ella Lucy Amy Rose Daisy Ruby Sophie Chloe Grace Ivy
    Molly Nora Olivia Ava Kate Jenny Poppy Hannah Maya Leah Alice Bella Clara Sue Jill Kim Tina Nina Hazel
    Iris Julia Wendy Penny Abby Emily Sally Katie Megan Stella Fiona Gina Heidi Lola Mila Nell Ruth Tess
    Vera Willa Zara Eva Cora""")
BOYS = _words("""Tom Ben Max Sam Leo Jack Tim Joe Jake Finn Oscar Noah Liam Lucas Ethan Henry Oliver Jacob
    Bob Timmy Billy Danny Owen Ryan Mark Peter Paul Luke Adam Eli Theo Hugo Felix Milo Jim Dan Toby Charlie
    Harry Freddie Jamie Kevin Nick Andy Arlo Ezra Gus Jasper Louis Miles Otto Rex Simon Victor Walter
    Zack Ned Ivan""")

CATEGORIES: dict[str, tuple[str, ...]] = {
    "name": GIRLS + BOYS,
    "colour": _words("red blue green yellow pink purple orange white black brown gray gold silver"),
    "animal": _words("""cat dog bird fish frog duck rabbit bunny puppy kitten bear lion tiger elephant monkey
        horse cow pig sheep goat mouse owl fox deer squirrel turtle snake bee butterfly ladybug giraffe zebra
        penguin dolphin whale hen chick lamb pony wolf hedgehog kangaroo koala panda parrot snail crab seal
        goose swan hippo camel otter raccoon beaver shark octopus starfish jellyfish seahorse lobster squid bat moose rhino gorilla chipmunk mole
        donkey llama peacock flamingo ostrich toad lizard puffin"""),
    "object": _words("""ball kite doll teddy robot puzzle balloon book box block crayon pencil blanket pillow
        cup spoon bucket shovel rope medal bell key ring necklace bracelet basket umbrella flashlight clock
        mirror brush flag map coin marble button ribbon sticker card bag bottle jar bowl puppet backpack
        trophy lantern wand notebook camera magnet compass telescope kazoo rattle pinwheel jigsaw spinner
        dollhouse trampoline skateboard slinky snowglobe"""),
    "food": _words("""apple banana cake cookie bread cheese carrot soup pie candy sandwich pizza honey jam
        muffin pancake cupcake cherry strawberry pear peach plum lemon melon watermelon corn egg rice pasta
        popcorn juice cereal toast berry pumpkin potato tomato cracker donut waffle yogurt salad pretzel
        milk lemonade cocoa oatmeal porridge noodle sausage butter broccoli cucumber mango"""),
    "place": _words("""park garden beach forest school farm zoo lake river library market castle hill meadow
        playground pond village bakery shop barn cave island jungle museum circus station harbor orchard
        field woods mountain city town store pool bridge tunnel airport hospital cafe theater stadium
        aquarium"""),
    "room": _words("kitchen bedroom attic bathroom basement garage hallway closet playroom porch"),
    "furniture": _words("bed table chair sofa couch desk shelf rug bench stool cupboard dresser"),
    "feeling": _words("""happy sad scared angry excited surprised proud lonely worried shy calm grumpy
        nervous curious bored sleepy glad upset cheerful jealous thankful brave delighted hopeful joyful
        frightened cranky puzzled gloomy"""),
    "clothing": _words("""hat cap coat dress shirt skirt scarf sweater jacket vest belt boot shoe sock mitten
        glove raincoat apron cape crown sandal slipper hoodie bonnet helmet tutu"""),
    "vehicle": _words("""car bus train boat bike plane ship truck tractor rocket scooter taxi van canoe wagon sled helicopter
        submarine bulldozer ambulance firetruck motorcycle trolley jeep"""),
    "instrument": _words("""drum guitar piano flute trumpet violin harp horn xylophone tuba banjo recorder
        tambourine ukulele cello harmonica"""),
    "weather": _words("sunny rainy windy cloudy snowy foggy stormy warm cold hot chilly breezy drizzly misty frosty icy gusty"),
    "day": _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday"),
    "month": _words("January February March April May June July August September October November December"),
    "season": _words("spring summer autumn winter"),
    "number": _words("two three four five six seven eight nine ten eleven twelve"),
    "family": _words("mom dad grandma grandpa sister brother aunt uncle cousin"),
    "job": _words("""teacher doctor baker farmer pilot firefighter nurse chef painter singer dancer builder
        gardener astronaut vet dentist artist sailor driver zookeeper librarian scientist mechanic plumber
        postman fisherman lifeguard magician clown photographer"""),
    "shape": _words("circle square triangle star heart diamond crescent rectangle"),
    "nature": _words("stone stick shell feather acorn pinecone leaf pebble flower mushroom seed twig branch nest log petal vine thorn root"),
    "game": _words("soccer basketball football tennis baseball hockey chess checkers bingo dominoes tag"),
    "bug": _words("ant beetle worm caterpillar grasshopper cricket firefly dragonfly moth spider"),
    "tree": _words("oak pine maple willow birch palm elm cedar"),
    "flower": _words("sunflower tulip dandelion orchid violet bluebell buttercup marigold"),
    "body": _words("nose ear eye hand foot arm leg knee tummy head finger toe cheek chin elbow shoulder"),
    "character": _words("""fairy wizard witch princess prince king queen knight pirate monster elf mermaid
        dragon giant"""),
    "home": _words("house cottage cabin tower igloo hut palace treehouse farmhouse"),
    "subject": _words("math reading spelling art music science history"),
    "holiday": _words("Christmas Halloween Easter Thanksgiving Hanukkah Diwali"),
    "action": _words("""run jump dance sing swim play climb hop skip laugh giggle clap whistle skate draw read
        nap wiggle twirl splash dig paint bake hike explore wander race crawl stretch prance tiptoe sail slide
        float bounce spin swing"""),
}

_CATEGORY_OF = {w: cat for cat, words in CATEGORIES.items() for w in words}
_CATEGORY_OF_LOWER = {w.lower(): cat for w, cat in _CATEGORY_OF.items()}


def category_of(word: str) -> str | None:
    """The category of a word (" Lily" and "Lily" alike; case-insensitive as a fallback), else None."""
    w = word.strip()
    return _CATEGORY_OF.get(w) or _CATEGORY_OF_LOWER.get(w.lower())


# ---- inflection (regular English rules, irregular forms listed) ---------------------------------

_VOWELS = "aeiou"
_IRREGULAR_PLURAL = {"mouse": "mice", "sheep": "sheep", "fish": "fish", "deer": "deer", "goose": "geese",
                     "wolf": "wolves", "leaf": "leaves", "scarf": "scarves", "shelf": "shelves",
                     "elf": "elves", "foot": "feet", "octopus": "octopuses",
                     "potato": "potatoes", "tomato": "tomatoes", "mango": "mangoes", "child": "children"}
_IRREGULAR_PAST = {"run": "ran", "swim": "swam", "sing": "sang", "draw": "drew", "read": "read", "dig": "dug",
                   "slide": "slid", "spin": "spun", "swing": "swung", "hold": "held", "find": "found",
                   "hide": "hid", "throw": "threw", "catch": "caught", "shake": "shook", "keep": "kept",
                   "bring": "brought", "buy": "bought", "make": "made", "build": "built", "eat": "ate",
                   "cut": "cut", "feed": "fed", "meet": "met", "fly": "flew", "ride": "rode", "win": "won",
                   "lose": "lost", "sweep": "swept", "blow": "blew", "grow": "grew", "bite": "bit",
                   "take": "took", "give": "gave", "hang": "hung", "sell": "sold", "teach": "taught",
                   "wake": "woke", "ring": "rang", "think": "thought", "know": "knew", "hear": "heard",
                   "forget": "forgot", "write": "wrote", "creep": "crept", "leap": "leapt", "sew": "sewed"}
_IRREGULAR_3SG = {"go": "goes", "do": "does", "have": "has"}


def _double_final(w: str) -> bool:
    """One-syllable consonant-vowel-consonant words double it: hop -> hopping, big -> bigger."""
    groups = sum(1 for i, c in enumerate(w) if c in _VOWELS and (i == 0 or w[i - 1] not in _VOWELS))
    return (groups == 1 and len(w) >= 3 and w[-1] not in _VOWELS + "wxy" and w[-2] in _VOWELS
            and w[-3] not in _VOWELS)


def plural(w: str) -> str:
    if w in _IRREGULAR_PLURAL:
        return _IRREGULAR_PLURAL[w]
    if w.endswith(("s", "sh", "ch", "x", "z")):
        return w + "es"
    if w.endswith("y") and w[-2] not in _VOWELS:
        return w[:-1] + "ies"
    return w + "s"


def verb_forms(w: str) -> tuple[str, str, str, str]:
    """(base, 3rd person singular, past, -ing)."""
    if w in _IRREGULAR_3SG:
        s = _IRREGULAR_3SG[w]
    elif w.endswith(("s", "sh", "ch", "x", "z")):
        s = w + "es"
    elif w.endswith("y") and w[-2] not in _VOWELS:
        s = w[:-1] + "ies"
    else:
        s = w + "s"
    if w.endswith("ie"):
        ing = w[:-2] + "ying"
    elif w.endswith("e") and not w.endswith(("ee", "oe", "ye")):
        ing = w[:-1] + "ing"
    elif _double_final(w):
        ing = w + w[-1] + "ing"
    else:
        ing = w + "ing"
    if w in _IRREGULAR_PAST:
        past = _IRREGULAR_PAST[w]
    elif w.endswith("e"):
        past = w + "d"
    elif w.endswith("y") and w[-2] not in _VOWELS:
        past = w[:-1] + "ied"
    elif _double_final(w):
        past = w + w[-1] + "ed"
    else:
        past = w + "ed"
    return w, s, past, ing


def compare_forms(w: str) -> tuple[str, str]:
    """(comparative, superlative): big -> bigger, biggest; happy -> happier, happiest."""
    if w.endswith("e"):
        stem = w[:-1]
    elif w.endswith("y") and w[-2] not in _VOWELS:
        stem = w[:-1] + "i"
    elif _double_final(w):
        stem = w + w[-1]
    else:
        stem = w
    return stem + "er", stem + "est"


def _a(w: str) -> str:
    """The indefinite article by sound: an owl, a ukulele."""
    return ("an " if w[0] in _VOWELS and not w.startswith(("uk", "uni", "use")) else "a ") + w


# ---- word pools that sentence slots draw from -------------------------------------------------

GOOD = _words("happy excited proud glad cheerful thankful calm brave surprised curious delighted hopeful joyful")
BAD = _words("""sad scared angry lonely worried shy grumpy nervous bored sleepy upset jealous frightened cranky
    puzzled gloomy""")
_COUNTABLE = ("animal", "object", "clothing", "vehicle", "nature", "job", "shape", "instrument", "furniture",
              "bug", "flower", "body", "character", "home")

ADJ_THING = _words("""shiny soft old new tiny big little round smooth bumpy fluffy broken heavy light sparkly
    squishy fuzzy bright dusty muddy wet dry clean dirty pretty special favorite strange funny silly magical
    wooden plastic striped spotted sticky tall short long lumpy crunchy shabby fancy plain lovely cute huge
    giant precious enormous teeny gigantic glittery colorful wobbly squeaky shimmering fragile sturdy handmade
    bendy stretchy slippery prickly dotted spotless ancient""")
ADJ_CREATURE = _words("""fluffy furry tiny friendly playful silly hungry little big fat fast slow spotted striped
    noisy quiet gentle wild cute funny clever sneaky lazy busy chubby bouncy cuddly shaggy skinny young old
    wise tall small""")
ADJ_PERSON = _words("""kind smart clever funny little young gentle helpful polite friendly busy careful quiet loud
    strong fast tall silly good sweet patient generous cheeky clumsy lively playful grumbly thoughtful cheery
    bossy chatty sporty artsy daring tidy messy sensible wiggly giggly""")
ADJ_PLACE = _words("""big quiet busy dark bright beautiful peaceful noisy crowded empty cozy tidy messy huge tiny
    old lovely magical secret hidden wide deep shady""")
COMPARABLE = _words("""big small tall short fast slow soft loud bright dark kind strong old young long heavy
    funny silly pretty shiny fluffy tiny quiet clean sweet nice cute fuzzy busy smart wise lucky""")
ADVERBS = _words("""slowly quickly happily softly gently loudly carefully quietly suddenly sadly bravely kindly
    proudly eagerly politely wildly sleepily nervously calmly patiently busily lazily merrily gladly brightly
    sweetly shyly angrily excitedly gracefully secretly finally luckily neatly boldly
    cheerfully silently playfully warmly tightly loosely honestly carelessly hungrily noisily""")
VERBS_MOVE = _words("""walk stroll dash rush hurry zoom jog scramble stomp shuffle sneak creep leap scurry
    wobble waddle gallop trot paddle zigzag""")
VERBS_ABOUT = _words("think dream wonder talk learn forget ask hear know care worry whisper joke write")
VERBS_DAY = _words("""wake yawn dress tidy sweep mop vacuum water plant shop knit sew rest relax bathe snack
    garden doodle scribble practice study shiver sneeze cough sniffle blink wink nod frown smile grin blush
    wave shrug hum""")
VERBS_NOISE = _words("buzz chirp squeak crash bang boom ring beep honk rattle jingle clang crackle pop drip tick")
INTERJECTIONS = _words("Wow Yay Hooray Yippee Oops Oh Ah Hmm Ouch Whee Phew Aww Yum Brr Ta-da")
FOOD_PL = tuple(plural(w) for w in _words("""apple banana cake cookie carrot pie sandwich pizza muffin pancake
    cupcake cherry strawberry pear peach plum lemon melon egg pumpkin potato tomato cracker donut waffle
    pretzel berry"""))
ADJ_FOOD = _words("""yummy tasty sweet sour crunchy juicy fresh sticky salty spicy creamy delicious warm gooey
    crispy chewy soft hot cold ripe golden smelly buttery sugary cheesy""")
SAY = _words("""said asked shouted whispered cried yelled called laughed giggled replied answered explained
    added sighed cheered gasped squealed mumbled exclaimed agreed begged promised announced grinned
    chuckled""")
OPENERS = _words("""Suddenly Later Meanwhile Afterwards Luckily Sadly Finally Then Soon Next Outside Inside
    Nearby Yesterday Today Tomorrow Somehow""")
ORDINALS = _words("first second third fourth fifth sixth seventh eighth ninth tenth last")
VERBS_THING = _words("""carry hold hug wash paint drop find hide share throw catch fix clean lift push pull shake
    squeeze polish touch kick roll fold wrap open drag tap stack keep borrow show bring buy make build grab
    sell decorate sort toss twist bend swap repair unwrap tie untie pack unpack hang lick stamp rub scrub dust
    fill empty flip juggle balance measure weigh color mend spot spill sniff wipe lose pick scatter gather
    collect trace label squash smash crumple snap glue tape staple zip lock unlock hook carve""")
VERBS_FOOD = _words("""eat taste smell share cook bake cut chew munch slice peel mix stir nibble gobble pack save
    serve grab finish""")
VERBS_ANIMAL = _words("""pet feed hug chase follow watch help call brush wash carry tickle rescue meet visit greet
    draw find hold teach cuddle comfort protect walk photograph tame thank wake miss spot guide notice""")
FEARS = ("the dark", "thunder", "deep water", "the tall slide", "big waves", "loud noises", "spiders",
         "the big dog next door", "the dentist", "the noisy vacuum", "bees", "the high swing")
SOUNDS = {"cat": "Meow", "dog": "Woof", "puppy": "Yip", "kitten": "Mew", "bird": "Tweet", "duck": "Quack",
          "cow": "Moo", "pig": "Oink", "sheep": "Baa", "goat": "Maa", "lamb": "Baa", "owl": "Hoot",
          "lion": "Roar", "tiger": "Grrr", "bear": "Growl", "bee": "Buzz", "frog": "Ribbit", "hen": "Cluck",
          "chick": "Peep", "mouse": "Squeak", "snake": "Hiss", "horse": "Neigh", "pony": "Neigh",
          "goose": "Honk", "wolf": "Awoo", "parrot": "Hello", "elephant": "Toot", "monkey": "Ooh"}

FRESH: dict[str, tuple[str, ...]] = {"any_" + cat: words for cat, words in CATEGORIES.items()}
FRESH.update({f"any_{cat}_pl": tuple(plural(w) for w in CATEGORIES[cat]) for cat in _COUNTABLE})
for _key, _verbs in (("any_action", CATEGORIES["action"]), ("vt", VERBS_THING), ("vf", VERBS_FOOD),
                     ("va", VERBS_ANIMAL), ("move", VERBS_MOVE), ("about", VERBS_ABOUT), ("day", VERBS_DAY),
                     ("noise", VERBS_NOISE)):
    _forms = [verb_forms(v) for v in _verbs]
    for _i, _suffix in enumerate(("", "_s", "_ed", "_ing")):
        FRESH[_key + _suffix] = tuple(f[_i] for f in _forms)
FRESH.update({"any_good": GOOD, "any_bad": BAD, "adj_thing": ADJ_THING, "adj_creature": ADJ_CREATURE,
              "adj_person": ADJ_PERSON, "adj_place": ADJ_PLACE, "adv": ADVERBS, "adj_food": ADJ_FOOD,
              "say": SAY, "opener": OPENERS, "ordinal": ORDINALS, "interj": INTERJECTIONS, "food_pl": FOOD_PL,
              "count": tuple(str(n) for n in range(11, 101)),
              "Vt": tuple(v.capitalize() for v in VERBS_THING),
              "Action": tuple(v.capitalize() for v in CATEGORIES["action"]),
              "cmp": tuple(compare_forms(w)[0] for w in COMPARABLE),
              "sup": tuple(compare_forms(w)[1] for w in COMPARABLE)})
for _key in list(FRESH):  # "{a_any_animal}" -> "an owl", "{A_any_colour}" -> "An orange"
    FRESH["a_" + _key] = tuple(_a(w) for w in FRESH[_key])
    FRESH["A_" + _key] = tuple(_a(w).capitalize() for w in FRESH[_key])

_GIRL_SET = frozenset(GIRLS)
_PRONOUNS = {True: ("She", "she", "Her", "her", "her", "herself", "girl"),
             False: ("He", "he", "His", "his", "him", "himself", "boy")}


def _cast(rng: random.Random) -> dict[str, str]:
    """The story-level slots: who and what the story is about, reused sentence after sentence."""
    choice = rng.choice
    names = CATEGORIES["name"]
    name = choice(names)
    friend = choice(names)
    while friend == name:
        friend = choice(names)
    ctx = dict(zip(("He", "he", "His", "his", "him", "self", "kid"), _PRONOUNS[name in _GIRL_SET], strict=True))
    ctx.update(zip(("fHe", "fhe", "fHis", "fhis", "fhim", "fself", "fkid"), _PRONOUNS[friend in _GIRL_SET],
                   strict=True))
    mom = rng.random() < 0.5
    pet, critter = choice(CATEGORIES["animal"]), choice(CATEGORIES["animal"])
    toy, colour = choice(CATEGORIES["object"]), choice(CATEGORIES["colour"])
    act, act2 = choice(CATEGORIES["action"]), choice(CATEGORIES["action"])
    job = choice(CATEGORIES["job"])
    sound = SOUNDS.get(pet, "Squeak")
    ctx.update({
        "Name": name, "Friend": friend, "Parent": "Mom" if mom else "Dad", "phe": "she" if mom else "he",
        "pet": pet, "a_pet": _a(pet), "pets": plural(pet), "Sound": sound, "sound": sound.lower(),
        "critter": critter, "a_critter": _a(critter), "A_critter": _a(critter).capitalize(), "toy": toy, "a_toy": _a(toy), "colour": colour,
        "a_colour": _a(colour), "place": choice(CATEGORIES["place"]), "place2": choice(CATEGORIES["place"]),
        "room": choice(CATEGORIES["room"]), "furniture": choice(CATEGORIES["furniture"]),
        "food": choice(CATEGORIES["food"]), "good": choice(GOOD), "bad": choice(BAD),
        "cloth": choice(CATEGORIES["clothing"]), "vehicle": choice(CATEGORIES["vehicle"]),
        "instrument": choice(CATEGORIES["instrument"]), "weather": choice(CATEGORIES["weather"]),
        "Day": choice(CATEGORIES["day"]), "season": choice(CATEGORIES["season"]),
        "age": choice(CATEGORIES["number"][1:6]), "job": job, "a_job": _a(job),
        "game": choice(CATEGORIES["game"]), "family": choice(CATEGORIES["family"]), "fear": choice(FEARS),
        "act": act, "act_ed": verb_forms(act)[2], "act_ing": verb_forms(act)[3], "act2": act2,
        "act2_ed": verb_forms(act2)[2],
    })
    return ctx


CAST_KEYS = frozenset(_cast(random.Random(0)))


# ---- templates --------------------------------------------------------------------------------
# An arc is paragraphs (blank-line separated) of beats (lines). A beat's alternatives are separated
# by " | " (a line starting with "| " continues the beat above); "? " makes a beat optional and "~"
# is one filler sentence. {Name}, {toy}... are story-level (the cast); {any_colour}, {a_any_animal},
# {vt_ed}, {adj_thing}... draw fresh for each sentence (a trailing digit gives a second draw).

FILLERS = """
{Name} saw {a_any_colour} {any_animal} in the {any_place}.
| {A_adj_creature} {any_animal} {any_action_ed} past {him}.
| The {any_animal_pl} were {any_action_ing} near the {any_place}.
| {Name} {vt_ed} the {adj_thing} {any_object}.
| {Friend} {vt_ed} {a_adj_thing} {any_object} and gave it to {Name}.
| {He} {vf_ed} the {any_food} {adv}.
| {Name} {va_ed} the {adj_creature} {any_animal}.
| The {any_object} was {adj_thing} and {adj_thing2}.
| {Name} picked up {a_any_nature} and put it in {his} pocket.
| {Name} found {a_any_colour} {any_nature} on the path.
| The sky turned {any_colour} and {any_colour2}.
| {He} put on {his} {any_colour} {any_clothing}.
| {Friend} wore {a_any_colour} {any_clothing} and {a_any_colour2} {any_clothing2}.
| Just then, {a_any_colour} {any_vehicle} went by.
| {Name} wanted to be {a_any_job} one day.
| "Do you like {any_food}?" asked {Friend}. "Yes, I love {any_food2}!" said {Name}.
| {Name} {any_action_ed} {adv} around the {any_place}.
| {He} drew {a_any_shape} with {a_any_colour} crayon.
| {Name} counted {any_number} {any_animal_pl} and {any_number2} {any_object_pl}.
| It was {any_day}, and the {any_place} was {adj_place}.
| The {any_animal} looked {any_feeling}.
| {His} {any_family} was {any_action_ing} in the {any_room}.
| {Name}'s {any_object} was {cmp} than {Friend}'s.
| It was the {sup} {any_animal} {he} had ever seen.
| "Look, {Friend}! {A_any_colour} {any_animal}!" said {Name}.
| The {any_vehicle} was {any_colour} and very {adj_thing}.
| In {any_month}, the {any_place} was always {any_weather}.
| It was {a_any_weather} day at the {any_place}.
| {Name} played the {any_instrument} for {his} {any_family}.
| They played {any_game} at the {any_place}.
| {Name} sat on the {any_furniture} in the {any_room}.
| {A_any_job} waved hello to {Name}.
| {Name} liked {any_season} best, because {he} could {any_action} outside.
| "Can we {any_action} at the {any_place}?" asked {Name}.
| "My {any_family} {any_action_s} every {any_day}," said {Friend}.
| "I like to {vt} my {any_object}," said {Name}.
| "Look! The {any_animal} is {vt_ing} the {any_object}!" said {Friend}.
| {Name} was {vf_ing} {any_food} when {Friend} came in.
| "Let's {vf} the {any_food}," said {Friend}.
| "The {any_animal} {va_s} the {any_animal_pl2} every {any_season}," said {his} {any_family}.
| "I want to {va} the {any_animal}!" said {Name}.
| {Friend} was {va_ing} the {adj_creature} {any_animal} in the {any_place}.
| {Name} heard a noise. It was {a_adj_creature} {any_animal} {any_action_ing} on the {any_furniture}.
| There were {any_shape_pl} on the {any_colour} {any_object}.
| {Name} found {any_number} {any_nature_pl} under the {any_furniture}.
| "Be careful with my {any_object}," said {Name}. "It is very {adj_thing}."
| The {any_job_pl} and the {any_job_pl2} all {any_action_ed} at the {any_place}.
| On the way, they saw {any_number} {any_vehicle_pl} and {a_any_vehicle2}.
| {Name} wore {his} {any_clothing} to play {any_game}.
| {His} {any_family} said, "Do not {vt} the {any_object} in the {any_room}."
| The {any_instrument_pl} and {any_instrument_pl2} made {a_adj_thing} sound.
| {Friend} {vt_s} {any_object_pl} for fun? No, {fhe} {vt_s} {any_object_pl2}!
| "Look at my {any_object}!" {say} {Name}.
| "I can {any_action}!" {say} {Friend}.
| "Where is the {any_animal}?" {say} {Name}.
| "{A_adj_food} {any_food}!" {say} {Friend}.
| The {any_food} was {adj_food} and {adj_food2}.
| {He} ate {a_adj_food} {any_food} and {a_adj_food2} {any_food2}.
| {Name} hurt {his} {any_body} and {say}, "Ouch!"
| The {any_animal} touched {Name}'s {any_body} with its {any_body2}.
| {Friend} had {any_colour} paint on {fhis} {any_body_pl}.
| {Name} climbed the big {any_tree} tree.
| They sat under an old {any_tree} tree and ate {any_food}.
| {Name} picked {a_any_flower} and {a_any_flower2} for {his} {any_family}.
| The {any_flower_pl} were {any_colour} and {any_colour2}.
| {A_any_bug} crawled on the {any_nature}.
| {Name} watched the {any_bug_pl} {any_action} in the grass.
| {Name} pretended to be {a_any_character}.
| {Parent} read a story about {a_any_character} and {a_any_character2}.
| "I am {a_any_character}!" {say} {Friend}, and {fhe} {any_action_ed} around the {any_room}.
| The {any_character_pl} in the book lived in {a_any_colour} castle.
| {opener}, {Name} saw {a_any_character} in the {any_place}.
| {opener}, the {any_animal_pl} {any_action_ed} away.
| {opener}, {Friend} {vt_ed} {his} {any_object}.
| {Name} came {ordinal} in the race, and {Friend} came {ordinal2}.
| It was the {ordinal} time {Name} had seen {a_any_animal}.
| "I will {vt} the {any_object} {adv}," {say} {Name}.
| {Name} {vt_ed} {a_adj_thing} {any_object} {adv}.
| The {any_animal} {va_ed} {Name} {adv}.
| "Don't {va} the {any_animal_pl}!" {say} {his} {any_family}.
| {Name} {move_ed} to the {any_place} as fast as {he} could.
| The {any_animal} {move_ed} across the {any_room}.
| "Why are you {move_ing}?" {say} {Friend}. "Because I like to {move}!" {say2} {Name}.
| "My {any_animal} {move_s} like {a_any_animal2}," {say} {Name}.
| {Name} {about_ed} about the {any_object} all day.
| "I {about} about {any_animal_pl} every night," {say} {Name}.
| {Friend} was {about_ing} about {a_adj_thing} {any_object}.
| "{interj}!" {say} {Name}. "Look at all the {food_pl}!"
| "{interj}! {A_adj_food} {any_food}!" {say} {Friend}.
| {His} {any_family} bought lots of {food_pl} at the market.
| {Name} counted all the way to {count}!
| There were {count} {any_animal_pl} at the {any_place}. {Name} counted them all.
| "{Vt} the {any_object}, please," {say} {his} {any_family}.
| "{Action} with me, {Name}!" {say} {Friend}.
| "Let's {any_action}! I'm {any_good}!" {say} {Name}.
| "I can't {vt} the {any_object}. It's too {adj_thing}," {say} {Friend}.
| "Don't be {any_bad}. We'll {any_action} together," {say} {Name}.
| "You're my best friend, and you've got {a_any_colour} {any_object}!" {say} {Friend}.
| {Name} didn't want to {vt} the {any_object}, but {he} couldn't say no.
| The {any_animal} wasn't {any_feeling}. It was just {adj_creature}.
| After breakfast, {Name} {day_ed} and {day_ed2}.
| {Friend} was {day_ing} in the {any_room} when the {any_animal} came in.
| "Why do you {day} so much?" {say} {Friend}. "I just like to {day}," {say2} {Name}.
| Every morning, {his} {any_family} {day_s} and {day_s2}.
| Suddenly, the {any_object} {noise_ed}!
| {Name} heard something {noise_ing} in the {any_room}.
| "What {noise_s} like that?" {say} {Name}. It was {a_any_animal}!
| {Name} lived in a little {any_home} near the {any_place}.
| The {any_character} lived in {a_adj_place} {any_home}.
| They walked past {any_number} {any_home_pl} on the way to the {any_place}.
| {Name}'s favorite subject at school was {any_subject}.
| "I got a star in {any_subject} today!" {say} {Name}.
| On {any_holiday}, {Name} got {a_any_colour} {any_object}.
| {Name} could not wait for {any_holiday}.
| In {any_month}, {Name} and {Friend} liked to {any_action} in the {any_place}.
| {Name}'s {any_family} was born in {any_month}.
| "Is it {any_month} yet?" asked {Name}. "Not yet. It is still {any_month2}," said {his} {any_family}.
| It was {a_any_weather} day in {any_month}.
| {A_any_bug} landed on {Name}'s {any_body}.
| "Look, {a_any_bug}!" {say} {Friend}. "Don't squash it!"
| The {any_bug} and the {any_bug2} were friends.
| {Friend} found {a_any_bug} under {a_any_nature}.
| The {any_tree} tree was taller than the {any_tree2} tree.
| {A_any_animal} sat under the {any_tree} tree.
| {Name} planted {a_any_flower} next to the {any_tree} tree.
| {Name} smelled the {any_flower}. It smelled {adj_food}.
| The {any_flower} was {any_colour}, and the {any_flower2} was {any_colour2}.
| {Name} washed {his} {any_body} and {his} {any_body2}.
| The {any_animal} had a big {any_body} and a little {any_body2}.
| {Name} pointed at {his} {any_body}. "It hurts here," {he} said.
| The {any_character} had {a_any_colour} {any_home}.
| {Name} drew {a_any_home} with {a_any_colour} door.
| "Let's build {a_any_home} for the {any_animal}!" {say} {Friend}.
| {Name} cut paper into {a_any_shape} and {a_any_shape2}.
| The cookie was shaped like {a_any_shape}.
| {Friend} made {a_any_shape} out of {any_nature_pl}.
| {Name} put {a_any_nature} and {a_any_nature2} in a jar.
| "This {any_nature} is for you," {say} {Name}.
| {Name} rode in {a_any_vehicle} with {his} {any_family}.
| "I want to drive {a_any_vehicle}!" {say} {Friend}.
| The {any_vehicle} went faster than the {any_vehicle2}.
| On {any_holiday}, the whole family played {any_game}.
| {Name} made {a_any_colour} card for {any_holiday}.
| At school, {Name} learned {any_subject} and {any_subject2}.
| "I love {any_subject}!" {say} {Friend}.
| {Friend} could play the {any_instrument} and the {any_instrument2}.
| "Can you teach me the {any_instrument}?" asked {Name}.
"""

INTRO = """
Once upon a time, there was {a_adj_person} {kid} named {Name}.
| Once upon a time, in a little town near the {place}, there lived {a_adj_person} {kid} called {Name}.
| There once was {a_adj_person} {kid} named {Name}.
| {Name} was {a_adj_person} {kid} who lived near the {place}.
| One {weather} day, a {kid} named {Name} woke up early.
| On {Day} morning, {Name} jumped out of bed.
? {He} was {age} years old. | {Name} was only {age}, but {he} was very {adj_person}. | {He} was {age} and a half.
{He} loved to {act} and {act2}.
| {His} favorite thing was to {act} at the {place}.
| {Name} had {a_colour} {toy} that {he} took everywhere.
| {He} had a pet {pet} that liked to {any_action}.
| Every day, {Name} and {his} {pet} {act_ed} at the {place}.
? {He} wanted to be {a_job} when {he} grew up. | {His} {family} always said {he} would be a great {job} one day.
? ~
"""

ARCS = {
    "lost_toy": """
One day, {Name} could not find {his} {toy}.
| One morning, {Name} looked for {his} {colour} {toy}, but it was gone.
| After lunch, {Name} wanted to play with {his} {toy}, but it was not in the {room}.
{He} felt very {bad}. | {Name} was so {bad} that {he} started to cry. | {His} lip shook and {he} felt {bad}.
"Where is my {toy}?" {he} asked. | "{Parent}, have you seen my {colour} {toy}?" asked {Name}. | "My {toy} is lost!" {Name} cried.
"Do not worry, {Name}. Let's look for it together," said {Parent}. | {Parent} gave {him} a hug. "We will find it," {phe} said.
? ~

They looked in the {room}. | First, {Name} looked in the {room}. | {Name} ran to the {room} to look.
{He} looked under the {furniture} and behind the {any_furniture}. | {He} looked on the {furniture}, but there was only {a_any_object}. | {He} looked under the {furniture}, but it was not there.
? ~
Then {Friend} came over to play. | Soon {Friend} knocked on the door. | {His} friend {Friend} came to help.
"I will help you look, {Name}!" said {Friend}. | "Two pairs of eyes are better than one," said {Friend} with a smile. | "I am good at finding things," said {Friend}.

At last, {Friend} saw something {colour} under the {any_furniture}. | Just then, the {pet} ran in with the {toy} in its mouth! | Then {Name} heard a noise in the {any_room}. It was the {pet}, and it was playing with the {toy}!
"My {toy}!" shouted {Name}. | "You found it!" {Name} cheered. | "There it is!" said {Friend}.
{Name} hugged {his} {toy} and felt {good}. | {Name} was so {good}. {He} thanked {Friend} again and again. | {He} held the {toy} tight and smiled.
? From that day on, {Name} always put {his} {toy} on the {any_furniture} before bed. | Now {Name} knew that friends help each other. | That night, {Name} slept with {his} {toy} next to {him}.
""",
    "new_friend": """
One day, {Name} went to the {place} with {his} {family}. | One {weather} afternoon, {Name} walked to the {place}. | On {Day}, {Name} and {his} {pet} went to the {place}.
? ~
There {he} saw a {fkid} {he} did not know. | Near the big tree, a {fkid} was sitting all alone. | {Name} saw a new {fkid} standing by the gate.
The {fkid} looked {bad}. | The {fkid} was holding {a_colour} {toy} and looked {bad}. | The {fkid} had {a_adj_thing} {toy}, but no one to play with.
{Name} felt {any_feeling}, but {he} walked over anyway. | {Name} took a deep breath and said hello. | {Name} smiled and waved.
"Hi, I am {Name}. What is your name?" | "Hello! My name is {Name}. Do you want to play?" {he} asked.
"I am {Friend}," said the {fkid}. | "My name is {Friend}," the {fkid} said softly. | "I am {Friend}. I just moved here from the {any_place}."

{Name} and {Friend} played {game} together. | They took turns with the {toy}. | {Friend} showed {Name} how to {act2}, and {Name} showed {Friend} how to {act}.
? ~
They {act_ed} all around the {place}. | They {act_ed} and {act2_ed} until the sun went down. | They laughed so much that their tummies hurt.
{Friend} was not {bad} anymore. | Soon {Friend} was smiling. | {Friend} felt {good}, and so did {Name}.
? ~

When it was time to go home, {Friend} said, "Can we play again tomorrow?" | At the end of the day, {Friend} gave {Name} {a_any_nature} as a gift. | Before they left, the two friends made a plan to meet at the {place} on {any_day}.
"Yes! You are my new best friend," said {Name}. | "Of course!" said {Name} with a big smile. | {Name} nodded and said, "See you soon, {Friend}!"
? {Name} went home feeling {good}. | That night, {Name} told {his} {family} all about {his} new friend {Friend}.
""",
    "rainy_day": """
One {season} morning, {Name} looked out the window. It was raining. | It was a rainy day, and the sky was dark and gray. | On {Day}, big drops of rain fell on the roof of {Name}'s house.
{Name} wanted to go to the {place} and {act}, but {he} had to stay inside. | "Oh no! I cannot go to the {place} today," said {Name}. | {Name} felt {bad} because {he} could not play outside.
"Why don't we find something fun to do inside?" said {Parent}. | {Parent} smiled. "Rainy days can be fun too," {phe} said. | Then {Friend} came over in {a_colour} raincoat.
? ~

First, they built a fort with blankets and {any_furniture_pl}. | They drew {any_shape_pl} and {any_animal_pl} with {any_colour} crayons. | They played the {instrument} and sang silly songs.
Then they ate {food} and {any_food} in the {room}. | Later, {Parent} read them a story about {a_any_animal} and {a_any_animal2}. | Next, they played {game} on the floor of the {room}.
? ~
{Name} looked at the window again. The rain had stopped! | After a while, the sun came out. | Soon the rain stopped and the sky turned blue.
A big rainbow was in the sky. It was red, orange, yellow, green, blue and purple. | There was a rainbow over the {place}! | Outside, there were big puddles everywhere.

{Name} put on {his} {any_colour} boots and jumped in the puddles. | {Name} and {Friend} ran outside to see the rainbow. | {Name} smiled. {He} felt {good}.
"Rainy days are fun too!" said {Name}. | "I love rainy days now," said {Name}. | "Can it rain again tomorrow?" asked {Name}, and everyone laughed.
""",
    "sharing": """
{Name} had {a_colour} {toy}. It was {his} favorite. | At the {place}, {Name} had a big bag of {food}. | {Name}'s {family} gave {him} a new {toy} for being good.
{Friend} wanted to play with it too. | {Friend} did not have anything. {fHe} looked at {Name}. | "Can I have a turn?" asked {Friend}.
"No! It is mine!" said {Name}. | {Name} held it close. "It is mine," {he} said. | {Name} did not want to share.
{Friend} felt {bad} and walked away. | {Friend} sat on the {any_furniture} and looked {bad}. | {Friend}'s eyes filled with tears.
? ~

{Name} did not feel {good} anymore. | {Name} looked at {Friend}. {He} felt {bad} too. | Then {Name} remembered what {his} {family} said: "Sharing is caring."
{Name} walked over to {Friend}. "I am sorry, {Friend}. Do you want to play with my {toy}?" | {Name} gave half of the {food} to {Friend}. | "Here, we can share," said {Name}.
{Friend} smiled a big smile. "Thank you, {Name}!" | "You are a good friend," said {Friend}. | {Friend} clapped {fhis} hands.
? ~

They played with the {toy} together and {act_ed} all afternoon. | They ate the {food} together under a big tree. | They took turns, and it was more fun than playing alone.
{Name} learned that sharing makes everyone {good}. | From then on, {Name} always shared with {his} friends. | {Name} felt warm inside. Sharing was the best.
""",
    "trip": """
On {Day}, {Name}'s family went on a trip to the {place}. | One {season} day, {Name} and {his} {family} got ready for a trip. | "We are going to the {place}!" said {Parent} one morning.
{Name} packed {his} {colour} {cloth}, {his} {toy} and some {food}. | {Name} was so {good} that {he} packed {his} bag twice. | {Name} could not wait. {He} {act_ed} around the {room}.
They went by {vehicle}. | They rode in {a_colour} {vehicle} for a long time. | The trip was long, so they took the {vehicle}.
? {Name} looked out the window and counted {any_number} {any_animal_pl}. | On the way, {Name} saw {a_any_colour} {any_animal} in a field.

When they got to the {place}, {Name} was so {good}. | At the {place}, everything was new. | The {place} was {adj_place} and {adj_place2}.
They saw {any_number} {any_animal_pl} and {a_adj_creature} {any_animal}. | There were {any_animal_pl} and {any_animal_pl2} everywhere. | {Name} and {his} {family} {any_action_ed} and {any_action_ed2} all day.
? ~
They had a picnic with {food} and {any_food}. | For lunch, they ate {food} on {a_any_colour} blanket. | {Parent} bought {Name} {a_any_colour} {any_object} at a little shop.
? ~

On the way home, {Name} fell asleep in the {vehicle}. | "That was the best trip ever!" said {Name}. | When they got home, {Name} told {his} {pet} all about it.
? {He} dreamed about the {place} and the {any_animal_pl}. | {Name} could not wait to go back.
""",
    "fear": """
{Name} was afraid of {fear}. | Every night, {Name} felt {bad} because of {fear}. | {Name} was {a_adj_person} {kid}, but {he} was scared of {fear}.
"I do not like {fear}," {he} told {his} {family}. | When {Name} thought about {fear}, {his} tummy felt funny. | {Name} hid behind the {furniture} whenever {he} thought of {fear}.
? ~
One day, {Name} and {Friend} went to the {place}. | On {Day}, {Name} had to face {his} fear. | One {weather} evening, there was no way around it.

{Name}'s knees shook. {He} felt {bad}. | "I cannot do it," whispered {Name}. | {Name} wanted to run back to the {room}.
{Friend} held {his} hand. "I am here with you," said {Friend}. | {Parent} said, "Being brave does not mean you are not scared." | "You can do it, {Name}!" said {Friend}.
{Name} took a deep breath and counted to {any_number}. | {Name} held {his} {toy} tight and took one small step. | {Name} closed {his} eyes, then opened them again.
? ~

It was not so bad after all! | Nothing bad happened. {Name} even laughed. | Soon {Name} was not scared anymore.
{Name} felt {good}. | "I did it!" shouted {Name}. | {Parent} gave {him} a big hug and said, "I am so proud of you."
? From that day on, {Name} was not afraid of {fear}. | {Name} learned that you can be scared and brave at the same time.
""",
    "birthday": """
Today was {Name}'s birthday! | It was {Name}'s birthday, and {he} was {age} years old. | On {Day}, {Name} woke up and remembered: it was {his} birthday!
{He} felt so {good}. | {Name} jumped up and down. | {Name} ran to the {room} in {his} pajamas.
{Parent} made a big cake with {any_colour} frosting and {age} candles. | There was {a_colour} cake on the {furniture}. | The {room} was full of {colour} balloons.

Soon {Friend}, {any_name} and {any_name2} came to the party. | {Friend} came with {fhis} {family}, and {any_name} came too. | All of {Name}'s friends came, even {any_name}.
They played {game} and {act_ed} in the {place}. | Everyone {any_action_ed} and {any_action_ed2}. | They sang songs and played the {instrument}.
? ~
{Friend} gave {Name} a box wrapped in {any_colour} paper. | {Name}'s {family} gave {him} a little box with a bow. | {Name} opened the biggest present first.
Inside was {a_adj_thing} {toy}! | Inside there was {a_colour} {cloth} and {a_any_object}. | It was {a_any_colour} {any_object}, just what {he} wanted!

"Happy birthday to you!" everyone sang. | Everyone sang "Happy Birthday" and clapped. | They all ate cake and {food}.
{Name} made a wish and blew out the candles. | {Name} closed {his} eyes, made a wish and blew. | {Name} blew so hard that all {age} candles went out at once.
? "This is the best birthday ever!" said {Name}. | That night, {Name} fell asleep with a big smile.
""",
    "helping_animal": """
One day, {Name} found {a_adj_creature} {critter} at the {place}. | On {Day}, {Name} heard a little cry near the {place}. It was {a_critter}! | While {Name} was walking to the {place}, {he} saw {a_critter} under a bush.
The {critter} was hurt. | The {critter} was lost and could not find its mother. | The poor {critter} was stuck in a hole and looked {any_bad}.
"Poor little {critter}," said {Name}. | {Name} felt {bad} for the {critter}. | "Do not be scared. I will help you," said {Name} softly.
? ~

{Name} picked up the {critter} very gently. | {Name} ran home to get {his} {family}. | {Name} gave the {critter} some water and a little {food}.
{Friend} helped {him} make a bed for it in a box. | {Parent} called the vet. | {Name} wrapped the {critter} in {his} {colour} {cloth}.
? ~
The next day, the {critter} was much better. | Soon the {critter} could {any_action} again. | After a few days, the {critter} was strong again.

Then its mother came looking for it. | {Name} took the {critter} back to the {place}. | The {critter} licked {Name}'s hand.
{Name} waved goodbye. "Bye, little {critter}!" | The {critter} looked back at {Name} one last time, then ran home. | "Thank you for helping," said {Parent}.
{Name} felt {good}. {He} had helped a friend. | {Name} learned that being kind to animals is important. | Every {any_day}, {Name} went to the {place} to look for the {critter}.
""",
    "garden": """
In the {season}, {Name} and {his} {family} planted a garden. | {Name} wanted to grow {a_any_colour} flower. | One {weather} morning, {Parent} gave {Name} a little bag of seeds.
They dug small holes in the dirt with {a_any_object}. | {Name} put the seeds in the holes and covered them. | {Name} planted {any_number} seeds next to the {any_nature}.
Every day, {Name} watered the seeds. | {Name} waited and waited. | "When will they grow?" asked {Name}.
? ~

At first, nothing happened. {Name} felt {bad}. | {A_critter} came and sniffed the dirt, but nothing grew. | "Plants need time," said {Parent}.
Then one day, {Name} saw a tiny green leaf! | After many days, little green shoots came up. | One morning, the garden was full of {any_colour} and {any_colour2} flowers.
? ~
Soon there were {food} plants too. | The garden grew and grew. | Bees and butterflies came to visit.

{Name} picked {any_colour} flowers for {his} {family}. | {Name} and {Friend} ate {any_food} from the garden. | {Name} showed the garden to {Friend}.
"Look what I grew!" said {Name}. | {Name} was very {good}. | "You have a green thumb," said {Parent} with a wink.
""",
    "baking": """
One {weather} afternoon, {Name} went to {his} {family}'s house. | On {Day}, {Name} wanted to bake something special. | {Name}'s {family} said, "Let's bake cookies today!"
They put on their {any_colour} aprons. | They got out a big bowl and a wooden spoon. | {Name} washed {his} hands first.
They mixed flour, sugar, eggs and butter. | {Name} poured the milk, and {Friend} stirred. | They added {food} to make it special.
? ~

Oops! {Name} spilled the flour all over the {furniture}. | There was flour on {Name}'s nose. | The {pet} got some dough on its paws.
They laughed and laughed. | Everyone giggled at the mess. | "Baking is messy," said {Parent}, "but that is part of the fun."
They put the cookies in the oven and waited. | The kitchen smelled warm and sweet. | While they waited, they cleaned the {room}.
? ~

At last, the cookies were ready. | Ding! The cookies were done. | The cookies came out golden and soft.
{Name} shared the cookies with {Friend} and {any_name}. | {Name} gave the first cookie to {his} {family}. | They ate them with {food} and milk.
"These are the best cookies ever!" said {Friend}. | {Name} felt {good}. {He} had made them {self}. | Everyone was {good} and full.
""",
    "snow_day": """
When {Name} woke up, everything outside was white. | It was the first snowy day of winter. | On {Day}, it snowed and snowed.
"Snow!" shouted {Name}. | {Name} pressed {his} nose to the window. | {Name} jumped out of bed and ran to the {room}.
{He} put on {his} {colour} {cloth}, {his} boots and {his} mittens. | {Parent} helped {him} with {his} warm coat and {any_colour} scarf. | {Name} got dressed in a hurry.

{Name} and {Friend} built a big snowman. | They gave the snowman a carrot nose and {a_any_colour} hat. | They made snow angels in the {place}.
? ~
They rode a sled down the hill. | {Friend} threw a snowball at {Name}, and {Name} threw one back. | They saw {any_animal} tracks in the snow.
Soon {Name}'s fingers were cold. | The wind blew, and {Name}'s cheeks turned pink. | After a long time, they were tired and cold.

They went inside and drank hot cocoa. | {Parent} made warm {food} for them. | They sat by the fire with the {pet}.
? ~
{Name} looked at the snowman from the window and felt {good}. | "Can it snow again tomorrow?" asked {Name}. | It was the best snow day ever.
""",
    "music_show": """
{Name}'s class was going to have a music show. | {Name} was learning to play the {instrument}. | At school, the teacher said, "We will have a show on {Day}!"
{Name} practiced every day in the {room}. | {Name} played the {instrument} for {his} {pet} every night. | {Friend} practiced too, on the {any_instrument}.
But {Name} felt {bad}. | "What if I make a mistake?" asked {Name}. | {Name} was worried that everyone would laugh.
? ~

On the day of the show, the room was full of people. | The big day came. {Name} wore {his} {colour} {cloth}. | {Name} saw {his} {family} in the front row.
{Name}'s hands shook. | {Name}'s heart went thump, thump, thump. | {Name} looked at {Friend}, and {Friend} smiled.
{Name} started to play. | {Name} took a deep breath and began. | {Name} played one note, then another.
? ~

The music was beautiful. | {Name} made one small mistake, but {he} kept playing. | Soon {Name} forgot to be {bad}.
When the song ended, everyone clapped and cheered. | The crowd clapped loudly. | {His} {family} stood up and cheered.
{Name} felt {good}. | "You did it!" said {Friend}. | {Name} took a bow and smiled.
""",
    "job_day": """
{Name} wanted to be {a_job} when {he} grew up. | One day, {Name}'s class went to visit {a_job}. | "What do you want to be?" asked {Name}'s teacher.
? "I want to be {a_job}!" said {Name}. | {Friend} wanted to be {a_any_job}. | {Name} thought about being {a_job} or {a_any_job}.
The {job} showed them around the {place}. | They met a kind {job} named {any_name}. | The {job} had {a_colour} {cloth} and a big smile.

The {job} let {Name} help. | {Name} asked many questions. | The {job} showed them how to {vt} the {any_object}.
{Name} and {Friend} tried it too. | {Name} got to hold {a_any_object}. | {Name} watched the {job} work and learned a lot.
? ~
"Being {a_job} is hard work," said the {job}, "but it is fun too." | "You need to be {adj_person} and {adj_person2}," said the {job}. | "Every day is different," said the {job}.

At the end of the day, {Name} said thank you. | {Name} waved goodbye to the {job}. | On the way home, {Name} could not stop talking.
"One day, I will be {a_job} too!" said {Name}. | {Name} felt {good} and a little bit grown up. | That night, {Name} dreamed about being {a_job}.
""",
}


# ---- compiling and generating ---------------------------------------------------------------

Template = tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]  # (format string, fresh slots)
Beat = tuple[bool, tuple[Template, ...]]  # (optional, alternatives)


def _compile(text: str) -> Template:
    fresh = []
    for _, field, _, _ in string.Formatter().parse(text):
        if field is None or field in CAST_KEYS:
            continue
        pool = FRESH.get(field.rstrip("0123456789"))
        if pool is None:
            raise ValueError(f"template slot {{{field}}} is neither a cast key nor a word pool: {text!r}")
        if field not in (f for f, _ in fresh):
            fresh.append((field, pool))
    return text, tuple(fresh)


def _beats(text: str) -> list[list]:
    """Lines of ' | '-separated alternatives ('| ' continues the line above) -> [optional, [alts]]."""
    beats: list[list] = []
    for line in text.strip().splitlines():
        line = line.strip()
        if line.startswith("| "):
            beats[-1][1].extend(line[2:].split(" | "))
            continue
        optional = line.startswith("? ")
        beats.append([optional, (line[2:] if optional else line).split(" | ")])
    return beats


FILLER_TEMPLATES: tuple[Template, ...] = tuple(_compile(t) for _, alts in _beats(FILLERS) for t in alts)


def _compile_paragraph(text: str) -> tuple[Beat, ...]:
    beats = []
    for optional, alts in _beats(text):
        if "~" in alts and len(alts) > 1:
            raise ValueError(f"'~' (a filler) must be a beat of its own: {alts!r}")
        beats.append((optional, FILLER_TEMPLATES if alts == ["~"] else tuple(_compile(t) for t in alts)))
    return tuple(beats)


_INTRO = _compile_paragraph(INTRO)
_ARCS = tuple(tuple(_compile_paragraph(p) for p in text.strip().split("\n\n")) for text in ARCS.values())


def _story(rng: random.Random) -> str:
    choice, rand = rng.choice, rng.random
    ctx = _cast(rng)
    paragraphs = []
    for paragraph in (_INTRO, *choice(_ARCS)):
        sentences = []
        for optional, alternatives in paragraph:
            if optional and rand() < 0.5:
                continue
            fmt, fresh = choice(alternatives)
            for key, pool in fresh:
                ctx[key] = choice(pool)
            sentences.append(fmt.format_map(ctx))
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def generate_stories(size_bytes: int, seed: int = 0) -> Iterator[str]:
    """Stories, one document each, until their total UTF-8 size reaches size_bytes (streamed)."""
    rng = random.Random(seed)
    total = 0
    while total < size_bytes:
        doc = _story(rng)
        total += len(doc)  # ASCII only, so characters are bytes
        yield doc


def _digest() -> str:
    """Hash of the word lists and templates, so an edit that forgets GENERATOR_VERSION still shows."""
    h = hashlib.sha256(repr((sorted(CATEGORIES.items()), sorted(FRESH.items()), FILLERS, INTRO, ARCS,
                             SOUNDS, FEARS)).encode())
    return h.hexdigest()[:16]


def stories_corpus(arg: str) -> Corpus:
    """The corpus for `stories[:SIZE[:SEED]]`: "" (5 MB, seed 0), "2MB", "2MB:3"."""
    size_text, _, seed_text = arg.strip().partition(":")
    how = "write it as stories, stories:SIZE or stories:SIZE:SEED, e.g. stories:5MB:0"
    try:
        size = parse_size(size_text) if size_text else DEFAULT_SIZE
    except UserError as e:
        raise UserError(f"stories:{arg}: {e}; {how}") from None
    if ":" in seed_text:
        raise UserError(f"stories:{arg}: too many parts; {how}")
    if seed_text and not seed_text.isdigit():
        raise UserError(f"stories:{arg}: seed {seed_text!r} is not a whole number >= 0; {how}")
    seed = int(seed_text) if seed_text else 0
    spec = f"stories:{_format_size(size)}:{seed}"
    return Corpus(spec=spec, kind="stories",
                  fingerprint=f"stories-v{GENERATOR_VERSION}-{_digest()}-{size}-{seed}",
                  train_docs=lambda: generate_stories(size, seed), val_docs=None,
                  meta={"categories": list(CATEGORIES), "size_bytes": size, "seed": seed,
                        "generator_version": GENERATOR_VERSION})


def _format_size(size: int) -> str:
    for unit, mult in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size % mult == 0:
            return f"{size // mult}{unit}"
    return str(size)
