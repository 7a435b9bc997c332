"""The stories corpus's templates: the intro, the filler sentences and the arcs a story is made of
(compiled and filled in by lrngpt.corpora.stories).

An arc is paragraphs (blank-line separated) of beats (lines). A beat's alternatives are separated
by " | " (a line starting with "| " continues the beat above); "? " makes a beat optional and "~"
is one filler sentence. {Name}, {toy}... are story-level (the cast); {any_colour}, {a_any_animal},
{vt_ed}, {adj_thing}... draw fresh for each sentence (a trailing digit gives a second draw).
"""

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
