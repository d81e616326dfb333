"""Hypothesis strategies for hands and plays drawn from a real deck."""

from __future__ import annotations

from hypothesis import strategies as st

from table.rules import Cards, Combination, Variant, get_variant, legal_plays

variants = st.sampled_from([get_variant("3p"), get_variant("4p")])


@st.composite
def hands(draw: st.DrawFn, variant: Variant, min_size: int = 0, max_size: int = 20) -> Cards:
    """Draws a hand of cards the variant's deck can hold."""
    deck = variant.deck.ranks()
    ranks = draw(
        st.lists(
            st.sampled_from(range(len(deck))), unique=True, min_size=min_size, max_size=max_size
        )
    )
    return Cards.from_ranks([deck[index] for index in ranks])


@st.composite
def previous_plays(draw: st.DrawFn, variant: Variant) -> Combination | None:
    """Draws a play to beat (from some other hand), or None for a lead."""
    other = draw(hands(variant, min_size=1, max_size=20))
    plays = legal_plays(other, None, variant)
    return draw(st.none() | st.sampled_from(plays))
