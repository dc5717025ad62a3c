"""The seed page's own words: its introduction, the paragraphs of Détails, the three questions of
its FAQ and its legal notice, in French exactly as the seed page has them
(`../shared/seed/000_b66ea8bb2f66a3c3.txt`, checked sentence by sentence by
`tests/test_seed_text.py`), and in a faithful English translation.

Figures that the core computes (the worked example's 112 Go and 132 Go, the cards' 24 Go and
80 Go) are placeholders filled by the page; so are the inline formulas (`{n}`, `{b}`, `{a}`,
`{sum}`) and the links to the sister calculators (`{inference}`, `{lora}`).
"""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    "web_seed.intro": {
        FR: "Estimez la VRAM GPU nécessaire pour affiner entièrement un grand modèle de langage à "
        "partir de son nombre de paramètres, du choix de l'optimiseur et de la mémoire "
        "d'activations, en appliquant la règle d'Adam en précision mixte de 16 octets par "
        "paramètre.",
        EN: "Estimate the GPU VRAM needed to fully fine-tune a large language model from its "
        "parameter count, the choice of optimizer and the activation memory, applying the "
        "mixed-precision Adam rule of 16 bytes per parameter.",
    },
    # --- Détails --------------------------------------------------------------------------------
    "web_seed.training_title": {
        FR: "VRAM pour l'entraînement de LLM", EN: "VRAM for LLM training",
    },
    "web_seed.training": {
        FR: "Affiner entièrement un grand modèle de langage exige bien plus de mémoire GPU que de "
        "simplement l'exécuter, et la raison en est l'optimiseur. L'inférence ne conserve que les "
        "poids, mais l'entraînement doit aussi garder un gradient pour chaque paramètre et l'état "
        "courant de l'optimiseur, puis ajouter les activations stockées pendant la passe avant. "
        "Ce calculateur estime la VRAM totale de l'affinage complet à partir du nombre de "
        "paramètres, du coût mémoire de l'optimiseur par paramètre et d'une valeur d'activations "
        "saisie séparément.",
        EN: "Fully fine-tuning a large language model takes far more GPU memory than simply "
        "running it, and the reason is the optimizer. Inference keeps only the weights, but "
        "training must also keep a gradient for every parameter and the optimizer's running "
        "state, then add the activations stored during the forward pass. This calculator "
        "estimates the total VRAM of full fine-tuning from the parameter count, the optimizer's "
        "memory cost per parameter and an activation value entered separately.",
    },
    "web_seed.states_title": {
        FR: "Les états du modèle dominent", EN: "Model states dominate",
    },
    "web_seed.states": {
        FR: "Le plus grand coût fixe de l'entraînement, ce sont les états du modèle — les poids, "
        "leurs gradients et l'état de l'optimiseur. Avec {n} paramètres en milliards et {b} "
        "octets par paramètre, les états du modèle occupent",
        EN: "The largest fixed cost of training is the model states — the weights, their "
        "gradients and the optimizer state. With {n} parameters in billions and {b} bytes per "
        "parameter, the model states take",
    },
    "web_seed.states_reference": {
        FR: "La valeur de référence pour l'entraînement en précision mixte avec Adam est de 16 "
        "octets par paramètre, qui se décompose ainsi : deux octets pour le poids 16 bits utilisé "
        "dans la passe avant, deux pour son gradient 16 bits, quatre pour une copie maîtresse "
        "32 bits du poids conservée pour la stabilité numérique, et quatre pour chacune des deux "
        "estimations de moment d'Adam — le moment et la variance. Cela fait {sum} pour chaque "
        "paramètre. Des optimiseurs moins coûteux réduisent les termes liés à l'état de "
        "l'optimiseur : Adam 8 bits stocke ses moments en précision réduite pour environ 12 "
        "octets par paramètre, et la simple SGD avec moment en demande environ 8.",
        EN: "The reference value for mixed-precision training with Adam is 16 bytes per "
        "parameter, which breaks down as follows: two bytes for the 16-bit weight used in the "
        "forward pass, two for its 16-bit gradient, four for a 32-bit master copy of the weight "
        "kept for numerical stability, and four for each of Adam's two moment estimates — the "
        "momentum and the variance. That makes {sum} for every parameter. Cheaper optimizers "
        "shrink the optimizer-state terms: 8-bit Adam stores its moments in reduced precision "
        "for about 12 bytes per parameter, and plain SGD with momentum needs about 8.",
    },
    "web_seed.activations_title": {
        FR: "Les activations sont saisies séparément", EN: "Activations are entered separately",
    },
    "web_seed.activations": {
        FR: "Les états du modèle sont fixés une fois le modèle et l'optimiseur choisis, mais pas "
        "les activations. Ce sont les valeurs intermédiaires mises en cache pendant la passe "
        "avant afin que la passe arrière puisse calculer les gradients, et leur taille évolue "
        "avec la taille de lot et la longueur de séquence plutôt qu'avec le nombre de "
        "paramètres. En raison de cette indépendance, ce calculateur prend la mémoire "
        "d'activations comme une entrée propre et l'ajoute simplement :",
        EN: "The model states are fixed once the model and the optimizer are chosen, but the "
        "activations are not. They are the intermediate values cached during the forward pass "
        "so that the backward pass can compute the gradients, and their size grows with the "
        "batch size and the sequence length rather than with the parameter count. Because of "
        "this independence, this calculator takes the activation memory as an input of its own "
        "and simply adds it:",
    },
    "web_seed.activations_where": {
        FR: "où {a} est la mémoire d'activations en Go. La mémoire d'activations peut se mesurer "
        "en exécutant une seule étape d'entraînement et en lisant le pic d'utilisation, ou se "
        "réduire fortement avec le checkpointing d'activations, qui recalcule les activations "
        "lors de la passe arrière au lieu de les conserver.",
        EN: "where {a} is the activation memory in GB. Activation memory can be measured by "
        "running a single training step and reading the peak usage, or cut sharply with "
        "activation checkpointing, which recomputes the activations during the backward pass "
        "instead of keeping them.",
    },
    "web_seed.example_title": {FR: "Exemple chiffré", EN: "Worked example"},
    "web_seed.example": {
        FR: "Prenons un modèle de {params} milliards de paramètres affiné avec Adam en précision "
        "mixte et, pour commencer, sans estimation d'activations :",
        EN: "Take a {params}-billion-parameter model fine-tuned with Adam in mixed precision "
        "and, to start with, no activation estimate:",
    },
    "web_seed.example_conclusion": {
        FR: "Les états du modèle seuls font {model_states} — déjà au-delà d'un unique "
        "accélérateur de {accelerator}. En ajoutant {activations} d'activations réalistes, le "
        "total atteint {total}, ce qui rend le constat évident : même un modèle {params}B, "
        "trivial à servir en inférence 16 bits, ne peut être entièrement affiné sur un seul GPU "
        "grand public. La mémoire bien plus modeste nécessaire pour simplement exécuter le modèle "
        "est traitée dans le {inference}.",
        EN: "The model states alone take {model_states} — already beyond a single "
        "{accelerator} accelerator. Adding {activations} of realistic activations brings the "
        "total to {total}, which makes the point plain: even a {params}B model, trivial to serve "
        "in 16-bit inference, cannot be fully fine-tuned on a single consumer GPU. The far more "
        "modest memory needed just to run the model is covered in the {inference}.",
    },
    "web_seed.lora_title": {FR: "Pourquoi LoRA change la donne", EN: "Why LoRA changes the game"},
    "web_seed.lora": {
        FR: "L'essentiel des 16 octets par paramètre, ce sont le gradient et l'état de "
        "l'optimiseur, et ceux-ci n'existent que pour les paramètres entraînés. LoRA gèle les "
        "poids de base et n'entraîne que de petits adaptateurs de faible rang, de sorte que les "
        "gradients et l'état de l'optimiseur ne couvrent que bien moins d'un pour cent des "
        "paramètres. Les poids gelés occupent toujours de la mémoire, mais retirer le plus gros "
        "terme est ce qui permet à un modèle qui demande {full_total} pour un affinage complet "
        "de tenir sur une seule carte de {consumer}. La taille de ces adaptateurs, et la façon "
        "dont le rang les contrôle, est détaillée dans le {lora}. Considérez la valeur obtenue "
        "ici comme une estimation de planification et confirmez-la sur une véritable étape "
        "d'entraînement, car les tampons temporaires et les allocations du framework déplacent "
        "le chiffre réel.",
        EN: "Most of the 16 bytes per parameter are the gradient and the optimizer state, and "
        "those exist only for the parameters being trained. LoRA freezes the base weights and "
        "trains only small low-rank adapters, so the gradients and the optimizer state cover "
        "well under one percent of the parameters. The frozen weights still take memory, but "
        "removing the largest term is what lets a model that needs {full_total} for a full "
        "fine-tune fit on a single {consumer} card. The size of these adapters, and how the "
        "rank controls it, is detailed in the {lora}. Treat the value obtained here as a "
        "planning estimate and confirm it on a real training step, since temporary buffers and "
        "framework allocations shift the real figure.",
    },
    # --- Questions fréquentes (FAQ) ---------------------------------------------------------------
    "web_seed.faq1_q": {
        FR: "D'où viennent les 16 octets par paramètre ?",
        EN: "Where do the 16 bytes per parameter come from?",
    },
    "web_seed.faq1_a1": {
        FR: "L'entraînement en précision mixte avec l'optimiseur Adam conserve plusieurs copies "
        "de chaque paramètre. Deux octets contiennent le poids 16 bits utilisé dans la passe "
        "avant et deux autres son gradient 16 bits. L'optimiseur Adam garde ensuite une copie "
        "maîtresse 32 bits du poids (quatre octets) plus deux estimations de moment 32 bits — "
        "le moment et la variance — de quatre octets chacune.",
        EN: "Mixed-precision training with the Adam optimizer keeps several copies of every "
        "parameter. Two bytes hold the 16-bit weight used in the forward pass and two more its "
        "16-bit gradient. The Adam optimizer then keeps a 32-bit master copy of the weight (four "
        "bytes) plus two 32-bit moment estimates — the momentum and the variance — of four "
        "bytes each.",
    },
    "web_seed.faq1_a2": {
        FR: "La somme donne 2 + 2 + 4 + 4 + 4 = 16 octets par paramètre, l'estimation standard "
        "des états du modèle en affinage complet.",
        EN: "The sum is 2 + 2 + 4 + 4 + 4 = 16 bytes per parameter, the standard estimate of "
        "the model states in full fine-tuning.",
    },
    "web_seed.faq2_q": {
        FR: "Pourquoi LoRA demande-t-il beaucoup moins de mémoire ?",
        EN: "Why does LoRA need so much less memory?",
    },
    "web_seed.faq2_a1": {
        FR: "L'affinage complet porte des gradients et un état d'optimiseur pour chaque "
        "paramètre, ce qui constitue l'essentiel des 16 octets par paramètre. LoRA gèle les "
        "poids d'origine et n'entraîne que de petites matrices d'adaptation de faible rang, de "
        "sorte que les gradients et l'état de l'optimiseur n'existent que pour une infime "
        "fraction des paramètres — souvent bien moins d'un pour cent.",
        EN: "Full fine-tuning carries gradients and an optimizer state for every parameter, "
        "which makes up most of the 16 bytes per parameter. LoRA freezes the original weights "
        "and trains only small low-rank adaptation matrices, so the gradients and the optimizer "
        "state exist only for a tiny fraction of the parameters — often well under one percent.",
    },
    "web_seed.faq2_a2": {
        FR: "Les poids de base gelés occupent toujours de la mémoire, mais ils n'ont besoin ni de "
        "gradient ni d'état d'optimiseur, ce qui supprime le plus gros terme et permet d'affiner "
        "de grands modèles sur un seul GPU. La taille de ces adaptateurs est détaillée dans le "
        "{lora}.",
        EN: "The frozen base weights still take memory, but they need neither a gradient nor an "
        "optimizer state, which removes the largest term and makes it possible to fine-tune "
        "large models on a single GPU. The size of these adapters is detailed in the {lora}.",
    },
    "web_seed.faq2_link": {
        FR: "calculateur de paramètres LoRA", EN: "LoRA parameter calculator",
    },
    "web_seed.faq3_q": {
        FR: "Comment estimer la mémoire d'activations ?",
        EN: "How do I estimate the activation memory?",
    },
    "web_seed.faq3_a1": {
        FR: "La mémoire d'activations correspond au stockage des valeurs intermédiaires "
        "conservées pendant la passe avant afin de calculer les gradients lors de la passe "
        "arrière. Contrairement aux états du modèle, elle évolue avec la taille de lot et la "
        "longueur de séquence plutôt qu'avec le nombre de paramètres ; elle est donc saisie "
        "séparément ici.",
        EN: "Activation memory is the storage of the intermediate values kept during the "
        "forward pass so that the gradients can be computed in the backward pass. Unlike the "
        "model states, it grows with the batch size and the sequence length rather than with "
        "the parameter count; that is why it is entered separately here.",
    },
    "web_seed.faq3_a2": {
        FR: "Elle peut se mesurer directement en exécutant une seule étape d'entraînement et en "
        "lisant le pic de mémoire, ou se réduire fortement avec le checkpointing d'activations, "
        "qui recalcule les activations lors de la passe arrière au lieu de les stocker. Pour un "
        "premier plan, partez de zéro pour voir le plancher des états du modèle, puis ajoutez "
        "une valeur mesurée.",
        EN: "It can be measured directly by running a single training step and reading the peak "
        "memory, or cut sharply with activation checkpointing, which recomputes the activations "
        "during the backward pass instead of storing them. For a first plan, start from zero to "
        "see the floor set by the model states, then add a measured value.",
    },
    # --- Mentions légales -----------------------------------------------------------------------
    "web_seed.legal": {
        FR: "Il s'agit d'une estimation au premier ordre de la mémoire d'affinage complet. Elle "
        "omet les tampons temporaires, le surcoût de communication et les allocations propres "
        "au framework, et traite les activations comme une seule valeur saisie. Vérifiez sur "
        "une véritable étape d'entraînement avant de dimensionner le matériel.",
        EN: "This is a first-order estimate of full fine-tuning memory. It leaves out temporary "
        "buffers, communication overhead and framework-specific allocations, and treats the "
        "activations as a single entered value. Check on a real training step before sizing "
        "the hardware.",
    },
}
