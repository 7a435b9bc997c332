"""The stories corpus's words: the categories a story draws its cast from, the inflection that makes
plurals, verb forms and comparatives of them, and the word pools (FRESH) that template slots such
as {any_colour} or {vt_ed} draw from afresh in every sentence (lrngpt.corpora.stories).
"""

from __future__ import annotations


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


def with_article(w: str) -> str:
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
    FRESH["a_" + _key] = tuple(with_article(w) for w in FRESH[_key])
    FRESH["A_" + _key] = tuple(with_article(w).capitalize() for w in FRESH[_key])
